import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ENVIRONMENTS, newId, type Environment } from '@tes/contracts';
import { AppError } from '@tes/errors';
import { Broker, changeAnnouncer, lazyPublisher } from '@tes/messaging';
import { createLogger } from '@tes/logger';
import { connectMongo, ensureIndexes } from '@tes/store';
import { AccountRepository, type ApiKeyDoc } from './store/account.repository.js';
import { generateApiKey, hashApiKey } from './domain/api-key.js';
import { PLAN_NAMES, type Plan } from './domain/plans.js';
import { hashPassword, passwordProblem } from './dashboard/password.js';
import { EMAIL_PATTERN, normalizeEmail } from './dashboard/owner.js';
import { EmailTakenError, OwnerRepository } from './dashboard/store/owner.repository.js';
import { deleteTool, listTools, registerTool, type ToolScope } from './http/routes/tools/tool-commands.js';
import { parseManifest } from './http/routes/tools/tool-manifest.js';

/**
 * Operator CLI for what the gateway owns: accounts and API keys.
 * Prints JSON on stdout; on bad input prints {"error":{code,message}} on stderr and exits 1.
 */
class UsageError extends Error {}

/** How long the CLI tries to announce a change to the gateways before it warns and exits (the change is stored). */
const ANNOUNCE_BUDGET_MS = 5000;

const USAGE = `usage:
  accounts create --name NAME [--plan prototyping|production|enterprise]
  accounts get ID | accounts disable ID | accounts enable ID
  accounts set-limits ID [--rpm N] [--concurrency N]
  keys create --account ID --env test|live
  keys list --account ID
  keys revoke --key KEY_ID
  owners create --account ID --email EMAIL (--password-stdin | --password PASSWORD)
  owners list --account ID
  tools register --account ID --env test|live --file MANIFEST.json   (through the running services)
  tools list --account ID --env test|live
  tools delete --account ID --env test|live --name NAME`;

async function main(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string', default: 'prototyping' },
      account: { type: 'string' },
      env: { type: 'string' },
      key: { type: 'string' },
      rpm: { type: 'string' },
      concurrency: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      file: { type: 'string' },
    },
  });
  const [group, command, id] = positionals;
  // Logs go to stderr, errors only: stdout carries the JSON answer alone.
  const logger = createLogger({ service: 'gateway-cli', level: 'error', stream: process.stderr });
  const mongo = await connectMongo({
    url: process.env['MONGO_URL'] ?? 'mongodb://127.0.0.1:27017',
    dbName: process.env['MONGO_DB'] ?? 'tes_gateway',
    logger,
  });
  const repo = new AccountRepository(mongo);
  const owners = new OwnerRepository(mongo);
  // A revoked key or a changed account is announced, so every gateway replica drops its cached copy.
  const publisher = lazyPublisher(brokerOf(logger, 'gateway-cli'), ANNOUNCE_BUDGET_MS);
  const announcer = changeAnnouncer(publisher, 'gateway.credentials_changed', logger, ANNOUNCE_BUDGET_MS);
  repo.onChange((accountId) => announcer.announce({ account_id: accountId }));
  try {
    await ensureIndexes(mongo);
    const key = `${group ?? ''} ${command ?? ''}`;
    switch (key) {
      case 'accounts create': {
        if (!values.name) throw new UsageError('--name is required');
        if (!PLAN_NAMES.includes(values.plan as Plan)) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
        const accountId = newId('acct');
        await repo.accounts.create({
          _id: accountId,
          name: values.name,
          plan: values.plan as Plan,
          status: 'active',
          created_at: new Date(),
        });
        const test = await createKey(repo, accountId, 'test');
        const live = await createKey(repo, accountId, 'live');
        return { account_id: accountId, name: values.name, plan: values.plan, api_keys: { test: test.api_key, live: live.api_key } };
      }
      case 'accounts get':
        return await accountOrFail(repo, id);
      case 'accounts disable':
      case 'accounts enable': {
        const acct = await accountOrFail(repo, id);
        await repo.setStatus(acct.account_id, command === 'disable' ? 'disabled' : 'active');
        return await accountOrFail(repo, acct.account_id);
      }
      case 'accounts set-limits': {
        const acct = await accountOrFail(repo, id);
        await repo.setLimits(acct.account_id, {
          ...(values.rpm ? { requests_per_minute: positiveInt(values.rpm, '--rpm') } : {}),
          ...(values.concurrency ? { concurrent_tasks: positiveInt(values.concurrency, '--concurrency') } : {}),
        });
        return await accountOrFail(repo, acct.account_id);
      }
      case 'keys create': {
        const acct = await accountOrFail(repo, values.account);
        if (values.env !== 'test' && values.env !== 'live') throw new UsageError('--env must be test or live');
        return await createKey(repo, acct.account_id, values.env);
      }
      case 'keys list': {
        const acct = await accountOrFail(repo, values.account);
        const keys = await repo.keys.find({ account_id: acct.account_id }).sort({ created_at: 1 }).lean<ApiKeyDoc[]>().exec();
        return keys.map(describeKey);
      }
      case 'keys revoke': {
        if (!values.key) throw new UsageError('--key is required');
        const doc = await repo.keys.findById(values.key).lean<ApiKeyDoc>().exec();
        if (!doc) throw new UsageError(`no key ${values.key}`);
        await repo.revokeKey(doc._id, doc.account_id);
        return describeKey({ ...doc, status: 'revoked' });
      }
      case 'owners create': {
        // A dashboard sign-in for the account's owner. The password is hashed with scrypt;
        // prefer --password-stdin (a --password value shows in the process list and shell history).
        const acct = await accountOrFail(repo, values.account);
        const email = normalizeEmail(values.email ?? '');
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
        const acct = await accountOrFail(repo, values.account);
        const list = await owners.owners.find({ account_id: acct.account_id }).sort({ created_at: 1 }).lean().exec();
        return list.map((o) => ({ owner_id: o._id, account_id: o.account_id, email: o.email, created_at: o.created_at }));
      }
      case 'tools register':
      case 'tools list':
      case 'tools delete': {
        const acct = await accountOrFail(repo, values.account);
        if (!ENVIRONMENTS.includes(values.env as Environment)) throw new UsageError('--env must be test or live');
        return await withBroker(logger, async (broker) => {
          const scope: ToolScope = { accountId: acct.account_id, environment: values.env as Environment, timeoutMs: 10_000 };
          if (command === 'list') return listTools(broker, scope);
          if (command === 'delete') {
            if (!values.name) throw new UsageError('--name is required');
            await deleteTool(broker, scope, values.name);
            return { deleted: values.name };
          }
          if (!values.file) throw new UsageError('--file is required (the JSON manifest; - reads standard input)');
          const text = readFileSync(values.file === '-' ? 0 : values.file, 'utf8');
          let manifest: unknown;
          try {
            manifest = JSON.parse(text);
          } catch (err) {
            throw new UsageError(`${values.file} is not JSON: ${(err as Error).message}`);
          }
          return registerTool(broker, scope, parseManifest(manifest));
        });
      }
      default:
        throw new UsageError(USAGE);
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

function brokerOf(logger: ReturnType<typeof createLogger>, source: string): Broker {
  return new Broker({
    url: process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672',
    source,
    logger,
    namespace: process.env['AMQP_NAMESPACE'] ?? '',
  });
}

/** Tools live with the orchestrator and the vault: the CLI asks them over the broker, as the API does. */
async function withBroker<T>(logger: ReturnType<typeof createLogger>, fn: (broker: Broker) => Promise<T>): Promise<T> {
  const broker = brokerOf(logger, 'gateway-cli');
  await broker.connect();
  try {
    return await fn(broker);
  } finally {
    await broker.close(2000);
  }
}

async function createKey(repo: AccountRepository, accountId: string, env: Environment) {
  const apiKey = generateApiKey(env);
  const doc: ApiKeyDoc = {
    _id: newId('key'),
    account_id: accountId,
    environment: env,
    hash: hashApiKey(apiKey),
    prefix: `pk_${env}_`,
    last4: apiKey.slice(-4),
    status: 'active',
    created_at: new Date(),
  };
  await repo.keys.create(doc);
  return { ...describeKey(doc), api_key: apiKey };
}

function describeKey(k: ApiKeyDoc) {
  return {
    key_id: k._id,
    account_id: k.account_id,
    environment: k.environment,
    prefix: k.prefix,
    last4: k.last4,
    status: k.status,
    created_at: k.created_at,
  };
}

async function accountOrFail(repo: AccountRepository, id: string | undefined) {
  if (!id) throw new UsageError('an account id is required');
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
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    const code = err instanceof AppError ? err.code : usage ? 'invalid_request' : 'internal_error';
    process.stderr.write(`${JSON.stringify({ error: { code, message: (err as Error).message } })}\n`);
    process.exit(1);
  },
);
