import { readFileSync } from 'node:fs';
import { ENVIRONMENTS, newId } from '@tes/contracts';
import { AppError } from '@tes/errors';
import { Broker, changeAnnouncer, lazyPublisher } from '@tes/messaging';
import { commandOrExit, oneOf, UsageError } from '@tes/cli';
import { ConfigError, parseEnv } from '@tes/config';
import { createLogger, type Logger } from '@tes/logger';
import { connectMongo, ensureIndexes } from '@tes/store';
import { AccountRepository } from './store/account.repository.js';
import { keyNameProblem, ROLL_EXPIRIES } from './domain/api-key.js';
import { createKey, keyView, listKeys, revokeKey, rollKey, type KeyView } from './dashboard/keys.js';
import { PLAN_NAMES } from './domain/plans.js';
import { hashPassword, passwordProblem } from './dashboard/password.js';
import { EMAIL_PATTERN, normalizeEmail } from './dashboard/owner.js';
import { EmailTakenError, OwnerRepository } from './dashboard/store/owner.repository.js';
import { deleteTool, listTools, registerTool, type ToolScope } from './http/routes/tools/tool-commands.js';
import { parseManifest } from './http/routes/tools/tool-manifest.js';
import { cliConfigSchema, COMMANDS, type CliConfig } from './cli/commands.js';

/**
 * Operator CLI for what the gateway owns: accounts, API keys, dashboard owners, custom tools.
 * Prints JSON on stdout; on bad input prints {"error":{code,message}} on stderr and exits 1
 * (2 when the command line does not parse: see @tes/cli).
 */
/** How long the CLI tries to announce a change to the gateways before it warns and exits (the change is stored). */
const ANNOUNCE_BUDGET_MS = 5000;

async function main(argv: string[]): Promise<unknown> {
  const command = commandOrExit(COMMANDS, argv);
  const config = parseEnv<CliConfig>(cliConfigSchema);
  // Logs go to stderr, errors only: stdout carries the JSON answer alone.
  const logger = createLogger({ service: 'gateway-cli', level: 'error', stream: process.stderr });
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const repo = new AccountRepository(mongo);
  const owners = new OwnerRepository(mongo);
  // A revoked key or a changed account is announced, so every gateway replica drops its cached copy.
  const publisher = lazyPublisher(brokerOf(config, logger), ANNOUNCE_BUDGET_MS);
  const announcer = changeAnnouncer(publisher, 'gateway.credentials_changed', logger, ANNOUNCE_BUDGET_MS);
  repo.onChange((accountId) => announcer.announce({ account_id: accountId }));
  try {
    await ensureIndexes(mongo);
    switch (command.name) {
      case 'accounts create': {
        const { name } = command.values;
        const plan = oneOf('--plan', command.values.plan, PLAN_NAMES);
        const accountId = newId('acct');
        await repo.accounts.create({ _id: accountId, name, plan, status: 'active', created_at: new Date() });
        const test = await createKey(repo, accountId, 'test');
        const live = await createKey(repo, accountId, 'live');
        return { account_id: accountId, name, plan, api_keys: { test: test.secret, live: live.secret } };
      }
      case 'accounts get':
        return await accountOrFail(repo, command.args[0]);
      case 'accounts disable':
      case 'accounts enable': {
        const acct = await accountOrFail(repo, command.args[0]);
        await repo.setStatus(acct.account_id, command.name === 'accounts disable' ? 'disabled' : 'active');
        return await accountOrFail(repo, acct.account_id);
      }
      case 'accounts set-limits': {
        const { rpm, concurrency } = command.values;
        const acct = await accountOrFail(repo, command.args[0]);
        await repo.setLimits(acct.account_id, {
          ...(rpm ? { requests_per_minute: positiveInt(rpm, '--rpm') } : {}),
          ...(concurrency ? { concurrent_tasks: positiveInt(concurrency, '--concurrency') } : {}),
        });
        return await accountOrFail(repo, acct.account_id);
      }
      case 'keys create': {
        const acct = await accountOrFail(repo, command.values.account);
        const { name } = command.values;
        const problem = name === undefined ? null : keyNameProblem(name);
        if (problem) throw new UsageError(`--name: ${problem}`);
        const created = await createKey(repo, acct.account_id, oneOf('--env', command.values.env, ENVIRONMENTS), name);
        return { ...describeKey(acct.account_id, created.key), api_key: created.secret };
      }
      case 'keys list': {
        const acct = await accountOrFail(repo, command.values.account);
        const keys = await listKeys(repo, acct.account_id);
        // Oldest first, as a log of the account's keys.
        return keys.sort((a, b) => a.created_at.getTime() - b.created_at.getTime()).map((k) => describeKey(acct.account_id, k));
      }
      case 'keys roll': {
        const expiresIn = oneOf('--expires-in', command.values['expires-in'], Object.keys(ROLL_EXPIRIES) as (keyof typeof ROLL_EXPIRIES)[]);
        const doc = await repo.keyById(command.values.key);
        if (!doc) throw new UsageError(`no key ${command.values.key}`);
        const rolled = await rollKey(repo, doc.account_id, doc._id, expiresIn);
        if (!rolled) throw new UsageError(`key ${doc._id} is revoked or expired: create a new one instead`);
        return { ...describeKey(doc.account_id, rolled.key), api_key: rolled.secret, replaced: describeKey(doc.account_id, rolled.old) };
      }
      case 'keys revoke': {
        const doc = await repo.keyById(command.values.key);
        if (!doc) throw new UsageError(`no key ${command.values.key}`);
        // Already revoked: said as it was stored.
        return describeKey(doc.account_id, (await revokeKey(repo, doc.account_id, doc._id)) ?? keyView(doc));
      }
      case 'owners create': {
        // A dashboard sign-in for the account's owner. The password is hashed with scrypt;
        // prefer --password-stdin (a --password value shows in the process list and shell history).
        const { values } = command;
        const acct = await accountOrFail(repo, values.account);
        const email = normalizeEmail(values.email);
        if (!EMAIL_PATTERN.test(email)) throw new UsageError('--email must be an email address');
        if (values['password-stdin'] && values.password !== undefined)
          throw new UsageError('give --password-stdin or --password, not both');
        const password = values['password-stdin'] ? await readStdinPassword() : values.password;
        if (password === undefined) throw new UsageError('--password-stdin or --password is required');
        const problem = passwordProblem(password);
        if (problem) throw new UsageError(problem);
        try {
          const owner = await owners.create(acct.account_id, email, await hashPassword(password));
          return { owner_id: owner._id, account_id: owner.account_id, email: owner.email, created_at: owner.created_at };
        } catch (err) {
          if (err instanceof EmailTakenError) throw new UsageError(err.message);
          throw err;
        }
      }
      case 'owners list': {
        const acct = await accountOrFail(repo, command.values.account);
        const list = await owners.owners.find({ account_id: acct.account_id }).sort({ created_at: 1 }).lean().exec();
        return list.map((o) => ({ owner_id: o._id, account_id: o.account_id, email: o.email, created_at: o.created_at }));
      }
      case 'tools register':
      case 'tools list':
      case 'tools delete': {
        const acct = await accountOrFail(repo, command.values.account);
        const scope: ToolScope = {
          accountId: acct.account_id,
          environment: oneOf('--env', command.values.env, ENVIRONMENTS),
          timeoutMs: 10_000,
        };
        return await withBroker(config, logger, async (broker) => {
          if (command.name === 'tools list') return listTools(broker, scope);
          if (command.name === 'tools delete') {
            await deleteTool(broker, scope, command.values.name);
            return { deleted: command.values.name };
          }
          const { file } = command.values;
          const text = readFileSync(file === '-' ? 0 : file, 'utf8');
          let manifest: unknown;
          try {
            manifest = JSON.parse(text);
          } catch (err) {
            throw new UsageError(`${file} is not JSON: ${(err as Error).message}`);
          }
          return registerTool(broker, scope, parseManifest(manifest));
        });
      }
    }
  } finally {
    await announcer.settled();
    await publisher.close();
    await mongo.close();
    if (announcer.failed() > 0) {
      process.stderr.write(
        'warning: the change is stored, but the gateways could not be told (broker unreachable): each replica sees it within its AUTH_CACHE_MS (default 10 s)\n',
      );
    }
  }
}

function brokerOf(config: CliConfig, logger: Logger): Broker {
  return new Broker({ url: config.AMQP_URL, source: 'gateway-cli', logger, namespace: config.AMQP_NAMESPACE });
}

/** Tools live with the orchestrator and the vault: the CLI asks them over the broker, as the API does. */
async function withBroker<T>(config: CliConfig, logger: Logger, fn: (broker: Broker) => Promise<T>): Promise<T> {
  const broker = brokerOf(config, logger);
  await broker.connect();
  try {
    return await fn(broker);
  } finally {
    await broker.close(2000);
  }
}

/** A key as the CLI prints it: never the key itself (only `api_key` at creation and roll). */
function describeKey(accountId: string, k: KeyView) {
  return {
    key_id: k.id,
    account_id: accountId,
    environment: k.environment,
    name: k.name,
    prefix: k.prefix,
    last4: k.last4,
    status: k.status,
    created_at: k.created_at,
    last_used_at: k.last_used_at,
    expires_at: k.expires_at,
    revoked_at: k.revoked_at,
  };
}

async function accountOrFail(repo: AccountRepository, id: string) {
  const acct = await repo.account(id);
  if (!acct) throw new UsageError(`no account ${id}`);
  return { account_id: acct._id, name: acct.name, plan: acct.plan, status: acct.status, limits: acct.limits ?? {} };
}

/** The password from standard input: everything up to EOF, without the final line break. */
async function readStdinPassword(): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('--password-stdin reads the password from a pipe, e.g. printf %s "$PW" | ...');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function positiveInt(v: string, flag: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive integer`);
  return n;
}

main(process.argv.slice(2)).then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    // A broker connection still being retried must not keep the process alive.
    process.exit(0);
  },
  (err: unknown) => {
    const code =
      err instanceof AppError
        ? err.code
        : err instanceof UsageError
          ? 'invalid_request'
          : err instanceof ConfigError
            ? 'invalid_configuration'
            : 'internal_error';
    process.stderr.write(`${JSON.stringify({ error: { code, message: (err as Error).message } })}\n`);
    process.exit(1);
  },
);
