#!/usr/bin/env node
/**
 * Operator CLI of the webhook dispatcher: endpoints, secrets, the delivery log, redelivery.
 * Talks to the dispatcher's database (MONGO_URL, MONGO_DB) directly; prints JSON on stdout. A
 * changed endpoint or secret is announced on the broker (AMQP_URL, AMQP_NAMESPACE), so every
 * replica drops its cached copy at once.
 */
import { commandOrExit, UsageError } from '@tes/cli';
import { ConfigError, parseEnv } from '@tes/config';
import { isAppError } from '@tes/errors';
import { createLogger } from '@tes/logger';
import { Broker, lazyPublisher } from '@tes/messaging';
import { KeyRingError, type KeyRing } from '@tes/sealing';
import { connectMongo } from '@tes/store';
import { COMMANDS, runCommand, toCommand } from './cli/commands.js';
import { cliConfigSchema, parseHostList, type CliConfig } from './config.js';
import { configAnnouncer } from './messaging/config-changes.js';
import { loadSecretKeys } from './secret-keys.js';
import { createRepositories } from './store/repositories.js';

/** How long the CLI tries to announce a change before it warns and exits (the change is stored). */
const ANNOUNCE_BUDGET_MS = 5000;

function fail(code: string, message: string, exitCode: number): never {
  process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
  process.exit(exitCode);
}

async function main(): Promise<void> {
  const parsed = commandOrExit(COMMANDS, process.argv.slice(2));
  let command;
  let config: CliConfig;
  let ring: KeyRing;
  try {
    command = toCommand(parsed);
    config = parseEnv<CliConfig>(cliConfigSchema);
    ring = loadSecretKeys(config);
  } catch (err) {
    if (isAppError(err)) fail(err.code, err.message, 1);
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof KeyRingError) fail('invalid_request', err.message, 1);
    throw err;
  }
  // Logs go to stderr, errors only: stdout carries the JSON answer alone.
  const logger = createLogger({ service: 'webhook-dispatcher-cli', level: 'error', stream: process.stderr });
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  // The broker is needed only to announce a change: connected on the first one, for at most the budget.
  const publisher = lazyPublisher(
    new Broker({ url: config.AMQP_URL, source: 'webhook-dispatcher-cli', logger, namespace: config.AMQP_NAMESPACE }),
    ANNOUNCE_BUDGET_MS,
  );
  const announcer = configAnnouncer(publisher, logger, ANNOUNCE_BUDGET_MS);
  const repos = createRepositories(mongo, ring);
  repos.endpoints.onChange(announcer.announce);
  repos.secrets.onChange(announcer.announce);
  const close = async () => {
    await announcer.settled();
    await publisher.close();
    await mongo.close().catch(() => undefined);
  };
  let result: unknown;
  try {
    result = await runCommand(command, {
      repos,
      guard: { allowedHosts: parseHostList(config.WEBHOOK_ALLOWED_HOSTS), allowPrivate: config.OUTBOUND_ALLOW_PRIVATE },
    });
  } catch (err) {
    await close();
    if (isAppError(err)) fail(err.code, err.message, 1);
    throw err;
  }
  await close();
  if (announcer.failed() > 0) {
    process.stderr.write(
      'warning: the change is stored, but the dispatchers could not be told (broker unreachable): each replica sees it within its WEBHOOK_CONFIG_CACHE_FOLLOWED_MS (default 60 s)\n',
    );
  }
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  // A broker connection still being retried must not keep the process alive.
  process.exit(0);
}

main().catch((err: unknown) => {
  fail('internal_error', err instanceof Error ? err.message : String(err), 2);
});
