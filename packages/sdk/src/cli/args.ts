import { parseArgs, type ParseArgsConfig } from 'node:util';
import { TASK_STATUSES, type CreateTaskParams, type ListTasksParams, type Metadata, type TaskStatus } from '../types.js';

/** A mistake in the command line: exit 1 with `{"error":{"code":"invalid_arguments",...}}`. */
export class UsageError extends Error {
  readonly code = 'invalid_arguments';
}

export const USAGE = `Usage: tes <command> [options]

Tasks (need SERVICE_API_KEY; SERVICE_BASE_URL optional):
  tes tasks create "PROMPT" [--user-id U] [--metadata k=v ...] [--test-mode] [--wait [--wait-timeout-ms N]] [--idempotency-key K]
  tes tasks get TASK_ID
  tes tasks list [--status S] [--user-id U] [--limit N] [--offset N]
  tes tasks cancel TASK_ID
  tes tasks trace TASK_ID
  tes tasks wait TASK_ID [--wait-timeout-ms N]
  tes connections list USER_ID
  tes connections revoke USER_ID SERVICE

Webhooks (need the webhook secret: --secret or SERVICE_WEBHOOK_SECRET):
  tes webhooks listen --port N [--host 127.0.0.1] [--secret whsec_...] [--scheme standard|service] [--tolerance-seconds 300]
      prints each verified event as one JSON line on stdout; answers 200, or 401 when the signature is wrong

Options for every API command:
  --base-url URL     instead of SERVICE_BASE_URL
  --insecure         accept a self-signed certificate (development only; or SERVICE_INSECURE_TLS=1)
  --timeout-ms N     time limit of one HTTP attempt (default 30000)
  --max-retries N    retries of 429/5xx/network failures (default 3)

Output is JSON on stdout. Errors: {"error":{"code","message",...}} on stderr and exit code 1.
With --wait (and tasks wait) the exit code is 2 when the task ended failed or cancelled.`;

const common = {
  'base-url': { type: 'string' },
  insecure: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  'max-retries': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

const waitTimeout = { 'wait-timeout-ms': { type: 'string' } } as const;

/** Each command's positional arguments and options (USAGE describes them); parsed by node:util parseArgs. */
export const COMMANDS = {
  'tasks create': {
    args: ['PROMPT'],
    options: {
      ...common,
      ...waitTimeout,
      'user-id': { type: 'string' },
      metadata: { type: 'string', multiple: true },
      'test-mode': { type: 'boolean' },
      wait: { type: 'boolean' },
      'idempotency-key': { type: 'string' },
    },
  },
  'tasks get': { args: ['TASK_ID'], options: common },
  'tasks cancel': { args: ['TASK_ID'], options: common },
  'tasks trace': { args: ['TASK_ID'], options: common },
  'tasks wait': { args: ['TASK_ID'], options: { ...common, ...waitTimeout } },
  'tasks list': {
    args: [],
    options: {
      ...common,
      status: { type: 'string' },
      'user-id': { type: 'string' },
      limit: { type: 'string' },
      offset: { type: 'string' },
    },
  },
  'connections list': { args: ['USER_ID'], options: common },
  'connections revoke': { args: ['USER_ID', 'SERVICE'], options: common },
  'webhooks listen': {
    args: [],
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      secret: { type: 'string' },
      scheme: { type: 'string' },
      'tolerance-seconds': { type: 'string' },
    },
  },
} as const satisfies Record<string, { args: readonly string[]; options: NonNullable<ParseArgsConfig['options']> }>;

type CommandName = keyof typeof COMMANDS;
type Strings<A extends readonly string[]> = { readonly [I in keyof A]: string };
type Parsed<N extends CommandName> = {
  args: Strings<(typeof COMMANDS)[N]['args']>;
  values: ReturnType<typeof parseArgs<{ options: (typeof COMMANDS)[N]['options']; allowPositionals: true; strict: true }>>['values'];
};

export interface CommonFlags {
  baseUrl?: string;
  insecure: boolean;
  timeoutMs?: number;
  maxRetries?: number;
}

export type Command =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'tasks.create'; common: CommonFlags; params: CreateTaskParams; wait: boolean; waitTimeoutMs?: number; idempotencyKey?: string }
  | { kind: 'tasks.get' | 'tasks.cancel' | 'tasks.trace'; common: CommonFlags; taskId: string }
  | { kind: 'tasks.wait'; common: CommonFlags; taskId: string; waitTimeoutMs?: number }
  | { kind: 'tasks.list'; common: CommonFlags; params: ListTasksParams }
  | { kind: 'connections.list'; common: CommonFlags; userId: string }
  | { kind: 'connections.revoke'; common: CommonFlags; userId: string; service: string }
  | {
      kind: 'webhooks.listen';
      port: number;
      host: string;
      secret?: string;
      scheme: 'standard' | 'service';
      toleranceSeconds?: number;
    };

function int(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`${flag} must be an integer >= ${min}`);
  return Number(value);
}

function commonOf(v: {
  'base-url'?: string | undefined;
  insecure?: boolean | undefined;
  'timeout-ms'?: string | undefined;
  'max-retries'?: string | undefined;
}): CommonFlags {
  const out: CommonFlags = { insecure: v.insecure === true };
  if (v['base-url'] !== undefined) out.baseUrl = v['base-url'];
  const timeoutMs = int(v['timeout-ms'], '--timeout-ms', 1);
  if (timeoutMs !== undefined) out.timeoutMs = timeoutMs;
  const maxRetries = int(v['max-retries'], '--max-retries', 0);
  if (maxRetries !== undefined) out.maxRetries = maxRetries;
  return out;
}

/** `--metadata k=v` pairs; the value is everything after the first `=`. */
export function parseMetadata(pairs: readonly string[]): Metadata {
  const out: Metadata = {};
  for (const pair of pairs) {
    const i = pair.indexOf('=');
    if (i <= 0) throw new UsageError(`--metadata takes key=value, got "${pair}"`);
    out[pair.slice(0, i)] = pair.slice(i + 1);
  }
  return out;
}

/** The checks and defaults parseArgs does not do, per command. */
const BUILD: { [N in CommandName]: (p: Parsed<N>) => Command } = {
  'tasks create': ({ args: [prompt], values }) => {
    if (!prompt) throw new UsageError('the prompt must not be empty');
    const params: CreateTaskParams = { prompt };
    if (values['user-id'] !== undefined) params.user_id = values['user-id'];
    if (values.metadata !== undefined) params.metadata = parseMetadata(values.metadata);
    if (values['test-mode']) params.mode = 'test';
    const cmd: Command = { kind: 'tasks.create', common: commonOf(values), params, wait: values.wait === true };
    const waitTimeoutMs = int(values['wait-timeout-ms'], '--wait-timeout-ms', 1);
    if (waitTimeoutMs !== undefined) {
      if (!cmd.wait) throw new UsageError('--wait-timeout-ms needs --wait');
      cmd.waitTimeoutMs = waitTimeoutMs;
    }
    if (values['idempotency-key'] !== undefined) cmd.idempotencyKey = values['idempotency-key'];
    return cmd;
  },
  'tasks get': ({ args: [taskId], values }) => ({ kind: 'tasks.get', common: commonOf(values), taskId }),
  'tasks cancel': ({ args: [taskId], values }) => ({ kind: 'tasks.cancel', common: commonOf(values), taskId }),
  'tasks trace': ({ args: [taskId], values }) => ({ kind: 'tasks.trace', common: commonOf(values), taskId }),
  'tasks wait': ({ args: [taskId], values }) => {
    const cmd: Command = { kind: 'tasks.wait', common: commonOf(values), taskId };
    const waitTimeoutMs = int(values['wait-timeout-ms'], '--wait-timeout-ms', 1);
    if (waitTimeoutMs !== undefined) cmd.waitTimeoutMs = waitTimeoutMs;
    return cmd;
  },
  'tasks list': ({ values }) => {
    const params: ListTasksParams = {};
    if (values.status !== undefined) {
      if (!(TASK_STATUSES as readonly string[]).includes(values.status))
        throw new UsageError(`--status must be one of ${TASK_STATUSES.join(', ')}`);
      params.status = values.status as TaskStatus;
    }
    if (values['user-id'] !== undefined) params.user_id = values['user-id'];
    const limit = int(values.limit, '--limit', 1);
    if (limit !== undefined) params.limit = limit;
    const offset = int(values.offset, '--offset', 0);
    if (offset !== undefined) params.offset = offset;
    return { kind: 'tasks.list', common: commonOf(values), params };
  },
  'connections list': ({ args: [userId], values }) => ({ kind: 'connections.list', common: commonOf(values), userId }),
  'connections revoke': ({ args: [userId, service], values }) => ({
    kind: 'connections.revoke',
    common: commonOf(values),
    userId,
    service,
  }),
  'webhooks listen': ({ values }) => {
    const port = int(values.port, '--port', 0);
    if (port === undefined || port > 65535) throw new UsageError('--port N (0..65535) is required');
    const scheme = values.scheme ?? 'standard';
    if (scheme !== 'standard' && scheme !== 'service') throw new UsageError('--scheme must be standard or service');
    const cmd: Command = { kind: 'webhooks.listen', port, host: values.host ?? '127.0.0.1', scheme };
    if (values.secret !== undefined) cmd.secret = values.secret;
    const tolerance = int(values['tolerance-seconds'], '--tolerance-seconds', 1);
    if (tolerance !== undefined) cmd.toleranceSeconds = tolerance;
    return cmd;
  },
};

export function parseCommand(argv: readonly string[]): Command {
  const [group, action, ...rest] = argv;
  if (group === undefined || group === 'help' || group === '--help' || group === '-h') return { kind: 'help' };
  if (group === '--version' || group === 'version') return { kind: 'version' };
  const name = `${group} ${action ?? ''}`.trim();
  if (rest.includes('--help') || rest.includes('-h')) return { kind: 'help' };
  if (!(name in COMMANDS)) throw new UsageError(`unknown command "${name}": run tes --help`);
  return build(name as CommandName, rest);
}

function build<N extends CommandName>(name: N, rest: string[]): Command {
  const spec = COMMANDS[name];
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: spec.options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  if (parsed.positionals.length !== spec.args.length) {
    throw new UsageError(`tes ${name} takes ${spec.args.join(' ') || 'no arguments'}, got ${parsed.positionals.length} argument(s)`);
  }
  return BUILD[name]({ args: parsed.positionals, values: parsed.values } as unknown as Parsed<N>);
}
