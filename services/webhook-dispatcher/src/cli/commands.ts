import { parseArgs } from 'node:util';
import { AppError } from '@tes/errors';
import { ENVIRONMENTS, type Environment } from '@tes/contracts';
import { listDeliveries, redeliver } from '../domain/deliveries.use-case.js';
import { getEndpoint, setEndpoint } from '../domain/manage-endpoint.use-case.js';
import { initSecrets, rotateSecret } from '../domain/manage-secrets.use-case.js';
import type { GuardOptions } from '../domain/ssrf-guard.js';
import type { Repositories } from '../store/repositories.js';

export const USAGE = `usage: webhook-dispatcher cli <command>
  secrets init        --account ID
  secrets rotate      --account ID --env test|live [--grace-hours 24]
  secrets reseal      (after a key rotation: every secret sealed with the current key)
  webhooks set        --account ID --env test|live --url URL
  webhooks get        --account ID --env test|live
  deliveries list     --task ID | --account ID [--env test|live] [--limit 50]
  deliveries redeliver --event ID
Env: MONGO_URL, MONGO_DB (default tes_webhook_dispatcher), WEBHOOK_ALLOWED_HOSTS, OUTBOUND_ALLOW_PRIVATE,
WEBHOOK_SECRET_KEYS or WEBHOOK_SECRET_KEYS_FILE (the key ring the secrets are sealed with); AMQP_URL,
AMQP_NAMESPACE (to tell the running dispatchers of a changed endpoint or secret).
Prints JSON on stdout; on bad input exits 1 with {"error":{"code","message"}} on stderr.`;

export type Command =
  | { name: 'help' }
  | { name: 'secrets init'; account: string }
  | { name: 'secrets rotate'; account: string; env: Environment; graceHours: number }
  | { name: 'secrets reseal' }
  | { name: 'webhooks set'; account: string; env: Environment; url: string }
  | { name: 'webhooks get'; account: string; env: Environment }
  | { name: 'deliveries list'; task: string }
  | { name: 'deliveries list'; account: string; env?: Environment; limit: number }
  | { name: 'deliveries redeliver'; event: string };

const ID = /^[A-Za-z0-9_.-]{1,128}$/;

function bad(message: string): AppError {
  return new AppError('invalid_request', message);
}

/** Parses argv (without node and the script) into a command; throws invalid_request with a readable message. */
export function parseCommand(argv: readonly string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        account: { type: 'string' },
        env: { type: 'string' },
        url: { type: 'string' },
        task: { type: 'string' },
        event: { type: 'string' },
        limit: { type: 'string' },
        'grace-hours': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw bad((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { name: 'help' };
  if (positionals.length !== 2) throw bad(`expected "<group> <command>", got "${positionals.join(' ')}"`);
  const name = positionals.join(' ');

  const id = (flag: 'account' | 'task' | 'event'): string => {
    const v = values[flag];
    if (v === undefined) throw bad(`--${flag} is required`);
    if (!ID.test(v)) throw bad(`--${flag} must be 1 to 128 letters, digits, "_", "." or "-"`);
    return v;
  };
  const env = (): Environment => {
    const v = values.env;
    if (v === undefined) throw bad('--env is required (test or live)');
    if (!(ENVIRONMENTS as readonly string[]).includes(v)) throw bad('--env must be test or live');
    return v as Environment;
  };
  const number = (flag: 'limit' | 'grace-hours', fallback: number, min: number, max: number): number => {
    const v = values[flag];
    if (v === undefined) return fallback;
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw bad(`--${flag} must be a number from ${min} to ${max}`);
    return n;
  };

  switch (name) {
    case 'secrets init':
      return { name, account: id('account') };
    case 'secrets rotate':
      return { name, account: id('account'), env: env(), graceHours: number('grace-hours', 24, 0, 720) };
    case 'secrets reseal':
      return { name };
    case 'webhooks set': {
      const url = values.url;
      if (url === undefined) throw bad('--url is required');
      return { name, account: id('account'), env: env(), url };
    }
    case 'webhooks get':
      return { name, account: id('account'), env: env() };
    case 'deliveries list': {
      if (values.task !== undefined && values.account !== undefined) throw bad('give --task or --account, not both');
      if (values.task !== undefined) return { name, task: id('task') };
      if (values.account === undefined) throw bad('--task or --account is required');
      return {
        name,
        account: id('account'),
        ...(values.env !== undefined ? { env: env() } : {}),
        limit: Math.floor(number('limit', 50, 1, 1000)),
      };
    }
    case 'deliveries redeliver':
      return { name, event: id('event') };
    default:
      throw bad(`unknown command "${name}"`);
  }
}

/** Runs a parsed command; the answer is printed as JSON by the caller. */
export async function runCommand(
  command: Exclude<Command, { name: 'help' }>,
  ctx: { repos: Repositories; guard: GuardOptions },
): Promise<unknown> {
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
