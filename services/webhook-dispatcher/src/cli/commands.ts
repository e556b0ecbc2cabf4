import { isHelp, oneOf, parseCommandLine, UsageError, type CommandTable, type HelpRequest, type ParsedCommand } from '@tes/cli';
import { ENVIRONMENTS, type Environment } from '@tes/contracts';
import { listDeliveries, redeliver } from '../domain/deliveries.use-case.js';
import { getEndpoint, setEndpoint } from '../domain/manage-endpoint.use-case.js';
import { initSecrets, rotateSecret } from '../domain/manage-secrets.use-case.js';
import type { GuardOptions } from '../domain/ssrf-guard.js';
import type { Repositories } from '../store/repositories.js';

const account = { type: 'string', value: 'ID', required: true, description: 'the account' } as const;
const env = { type: 'string', value: 'test|live', required: true, description: 'the environment' } as const;

/** The dispatcher's operator commands: `pnpm admin <group> <command>` for the groups it owns. */
export const COMMANDS = {
  program: 'pnpm admin',
  groups: {
    secrets: {
      init: { description: "The account's test and live signing secrets, created once (printed each time).", options: { account } },
      rotate: {
        description: 'A new signing secret; the previous one stays valid for the grace period.',
        options: {
          account,
          env,
          'grace-hours': { type: 'string', value: 'N', description: 'hours the previous secret stays valid (default 24, at most 720)' },
        },
      },
      reseal: { description: 'After a key rotation: every secret sealed with the current key.' },
    },
    webhooks: {
      set: {
        description: 'Sets the endpoint the task events are sent to.',
        options: { account, env, url: { type: 'string', value: 'URL', required: true, description: 'the endpoint (https for live)' } },
      },
      get: { description: "The account's endpoint.", options: { account, env } },
    },
    deliveries: {
      list: {
        description: 'The delivery log with its attempts: of one task, or of an account.',
        options: {
          task: { type: 'string', value: 'ID', description: 'the task (or --account)' },
          account: { ...account, required: false, description: 'the account (or --task)' },
          env: { ...env, required: false, description: 'the environment (with --account)' },
          limit: { type: 'string', value: 'N', description: 'events listed (default 50, at most 1000)' },
        },
      },
      redeliver: {
        description: 'Sends an undeliverable event again.',
        options: { event: { type: 'string', value: 'ID', required: true, description: 'the event' } },
      },
    },
  },
  notes: `Env (webhook-dispatcher): MONGO_URL, MONGO_DB (default tes_webhook_dispatcher), WEBHOOK_ALLOWED_HOSTS, OUTBOUND_ALLOW_PRIVATE,
WEBHOOK_SECRET_KEYS or WEBHOOK_SECRET_KEYS_FILE (the key ring the secrets are sealed with); AMQP_URL,
AMQP_NAMESPACE (to tell the running dispatchers of a changed endpoint or secret).
Prints JSON on stdout; on bad input exits 1 with {"error":{"code","message"}} on stderr (2 for a command line that does not parse).`,
} as const satisfies CommandTable;

export type Command =
  | { name: 'secrets init'; account: string }
  | { name: 'secrets rotate'; account: string; env: Environment; graceHours: number }
  | { name: 'secrets reseal' }
  | { name: 'webhooks set'; account: string; env: Environment; url: string }
  | { name: 'webhooks get'; account: string; env: Environment }
  | { name: 'deliveries list'; task: string }
  | { name: 'deliveries list'; account: string; env?: Environment; limit: number }
  | { name: 'deliveries redeliver'; event: string };

const ID = /^[A-Za-z0-9_.-]{1,128}$/;

function id(flag: string, value: string): string {
  if (!ID.test(value)) throw new UsageError(`${flag} must be 1 to 128 letters, digits, "_", "." or "-"`);
  return value;
}

function number(flag: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max)
    throw new UsageError(`${flag} must be a number from ${min} to ${max}`);
  return n;
}

/** The parsed command line as a command, its values checked; throws UsageError naming what is wrong. */
export function toCommand(parsed: ParsedCommand<typeof COMMANDS>): Command {
  switch (parsed.name) {
    case 'secrets init':
      return { name: parsed.name, account: id('--account', parsed.values.account) };
    case 'secrets rotate': {
      const { values } = parsed;
      return {
        name: parsed.name,
        account: id('--account', values.account),
        env: oneOf('--env', values.env, ENVIRONMENTS),
        graceHours: number('--grace-hours', values['grace-hours'], 24, 0, 720),
      };
    }
    case 'secrets reseal':
      return { name: parsed.name };
    case 'webhooks set': {
      const { values } = parsed;
      return {
        name: parsed.name,
        account: id('--account', values.account),
        env: oneOf('--env', values.env, ENVIRONMENTS),
        url: values.url,
      };
    }
    case 'webhooks get': {
      const { values } = parsed;
      return { name: parsed.name, account: id('--account', values.account), env: oneOf('--env', values.env, ENVIRONMENTS) };
    }
    case 'deliveries list': {
      const { values } = parsed;
      if (values.task !== undefined && values.account !== undefined) throw new UsageError('give --task or --account, not both');
      if (values.task !== undefined) return { name: parsed.name, task: id('--task', values.task) };
      if (values.account === undefined) throw new UsageError('--task or --account is required');
      return {
        name: parsed.name,
        account: id('--account', values.account),
        ...(values.env !== undefined ? { env: oneOf('--env', values.env, ENVIRONMENTS) } : {}),
        limit: Math.floor(number('--limit', values.limit, 50, 1, 1000)),
      };
    }
    case 'deliveries redeliver':
      return { name: parsed.name, event: id('--event', parsed.values.event) };
  }
}

/** For tests and in-process callers: the command line read and checked in one step. */
export function parseCommand(argv: readonly string[]): Command | HelpRequest {
  const parsed = parseCommandLine(COMMANDS, argv);
  return isHelp(parsed) ? parsed : toCommand(parsed);
}

/** Runs a parsed command; the answer is printed as JSON by the caller. */
export async function runCommand(command: Command, ctx: { repos: Repositories; guard: GuardOptions }): Promise<unknown> {
  const { repos } = ctx;
  switch (command.name) {
    case 'secrets init':
      return initSecrets(repos.secrets, command.account);
    case 'secrets rotate':
      return rotateSecret(repos.secrets, command.account, command.env, command.graceHours);
    case 'secrets reseal':
      return repos.secrets.sealAll(true);
    case 'webhooks set':
      return setEndpoint(
        { endpoints: repos.endpoints, secrets: repos.secrets, guard: ctx.guard },
        command.account,
        command.env,
        command.url,
      );
    case 'webhooks get':
      return getEndpoint(repos.endpoints, command.account, command.env);
    case 'deliveries list':
      return 'task' in command
        ? listDeliveries(repos, { task_id: command.task })
        : listDeliveries(repos, {
            account_id: command.account,
            ...(command.env ? { environment: command.env } : {}),
            limit: command.limit,
          });
    case 'deliveries redeliver':
      return redeliver(repos, command.event);
  }
}
