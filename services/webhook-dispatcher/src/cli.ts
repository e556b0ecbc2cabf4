#!/usr/bin/env node
/**
 * Operator CLI of the webhook dispatcher: endpoints, secrets, the delivery log, redelivery.
 * Talks to the dispatcher's database (MONGO_URL, MONGO_DB) directly; prints JSON on stdout.
 */
import { ConfigError, parseEnv } from '@tes/config';
import { isAppError } from '@tes/errors';
import { createLogger } from '@tes/logger';
import { connectMongo } from '@tes/store';
import { parseCommand, runCommand, USAGE } from './cli/commands.js';
import { cliConfigSchema, parseHostList, type CliConfig } from './config.js';
import { createRepositories } from './store/repositories.js';

function fail(code: string, message: string, exitCode: number): never {
  process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
  process.exit(exitCode);
}

async function main(): Promise<void> {
  let command;
  let config: CliConfig;
  try {
    command = parseCommand(process.argv.slice(2));
    config = parseEnv<CliConfig>(cliConfigSchema);
  } catch (err) {
    if (isAppError(err)) fail(err.code, err.message, 1);
    if (err instanceof ConfigError) fail('invalid_request', err.message, 1);
    throw err;
  }
  if (command.name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // Logs go to stderr, errors only: stdout carries the JSON answer alone.
  const logger = createLogger({ service: 'webhook-dispatcher-cli', level: 'error', stream: process.stderr });
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  let result: unknown;
  try {
    result = await runCommand(command, {
      repos: createRepositories(mongo),
      guard: { allowedHosts: parseHostList(config.WEBHOOK_ALLOWED_HOSTS) },
    });
  } catch (err) {
    await mongo.close().catch(() => undefined);
    if (isAppError(err)) fail(err.code, err.message, 1);
    throw err;
  }
  await mongo.close().catch(() => undefined);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((err: unknown) => {
  fail('internal_error', err instanceof Error ? err.message : String(err), 2);
});
