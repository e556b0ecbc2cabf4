#!/usr/bin/env node
// Operator CLI: `pnpm admin <group> <command> ...`. Each service owns its data, so each
// group is answered by the CLI of the service that owns it; this file only routes.
//   accounts, keys, owners,
//   tools                   → gateway (accounts, API keys, dashboard owners; custom tools, which
//                             it registers with the orchestrator and the vault over the broker)
//   webhooks, secrets,
//   deliveries              → webhook-dispatcher (endpoints, signing secrets, delivery log)
//   vault                   → oauth-vault (reencrypt, settings-link, connections list)
// `accounts create` also creates the account's webhook secrets and prints both.
// `--help` lists every command with its options (each CLI prints its own groups).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OWNERS = {
  accounts: 'gateway',
  keys: 'gateway',
  owners: 'gateway',
  tools: 'gateway',
  webhooks: 'webhook-dispatcher',
  secrets: 'webhook-dispatcher',
  deliveries: 'webhook-dispatcher',
  vault: 'oauth-vault',
};
const DATABASES = { gateway: 'tes_gateway', 'webhook-dispatcher': 'tes_webhook_dispatcher', 'oauth-vault': 'tes_oauth_vault' };

const cliOf = (service) => path.join(root, 'services', service, 'dist', 'cli.js');

function run(service, args) {
  const cli = cliOf(service);
  if (!existsSync(cli)) fail('not_built', `${cli} is missing: run pnpm build first`);
  const dbVar = `${service.toUpperCase().replaceAll('-', '_')}_MONGO_DB`;
  const env = { ...process.env, MONGO_DB: process.env[dbVar] ?? DATABASES[service] };
  // Standard input passes through (e.g. `owners create --password-stdin`).
  const input = process.stdin.isTTY ? undefined : readFileSync(0);
  const res = spawnSync(process.execPath, [cli, ...args], { env, encoding: 'utf8', ...(input ? { input } : {}) });
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(res.stdout);
    process.stderr.write(res.stderr);
    process.exit(res.status ?? 1);
  }
  if (res.status !== 0) {
    process.stderr.write(res.stderr || `${service} CLI failed\n`);
    process.exit(res.status ?? 1);
  }
  return JSON.parse(res.stdout);
}

function fail(code, message, exitCode = 1) {
  process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
  process.exit(exitCode);
}

/** Every service CLI's help without its usage line (the first paragraph), under one usage line. */
function printHelp() {
  const parts = [
    'usage: pnpm admin <group> <command> [arguments] [options]',
    `Each group is answered by the CLI of the service that owns it, on that service's database (MONGO_DB is read from
${Object.keys(DATABASES)
  .map((s) => `${s.toUpperCase().replaceAll('-', '_')}_MONGO_DB`)
  .join(', ')}; defaults ${Object.values(DATABASES).join(', ')}).
accounts create also creates the account's webhook secrets. pnpm admin <group> [<command>] --help for one group or command.`,
  ];
  for (const service of new Set(Object.values(OWNERS))) {
    if (!existsSync(cliOf(service))) {
      parts.push(`(${service}: ${cliOf(service)} is missing: run pnpm build first)`);
      continue;
    }
    const res = spawnSync(process.execPath, [cliOf(service), '--help'], { encoding: 'utf8' });
    if (res.status !== 0) fail('internal_error', `${service} --help failed: ${res.stderr}`);
    parts.push(res.stdout.slice(res.stdout.indexOf('\n\n') + 2).trimEnd());
  }
  process.stdout.write(`${parts.join('\n\n')}\n`);
}

const args = process.argv.slice(2);
const [group, command] = args;
if (group === '--help' || group === '-h' || group === 'help') {
  printHelp();
  process.exit(0);
}
const owner = OWNERS[group];
if (group === undefined) {
  fail('invalid_request', `usage: pnpm admin ${Object.keys(OWNERS).join('|')} <command> [options] (pnpm admin --help lists them)`);
}
if (!owner) fail('invalid_request', `unknown command "${args.slice(0, 2).join(' ')}": see pnpm admin --help`, 2);
let out = run(owner, args);
if (group === 'accounts' && command === 'create') {
  const secrets = run('webhook-dispatcher', ['secrets', 'init', '--account', out.account_id]);
  out = { ...out, webhook_secrets: secrets.webhook_secrets };
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
