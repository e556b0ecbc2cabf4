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

function run(service, args) {
  const cli = path.join(root, 'services', service, 'dist', 'cli.js');
  if (!existsSync(cli)) fail('not_built', `${cli} is missing: run pnpm build first`);
  const dbVar = `${service.toUpperCase().replaceAll('-', '_')}_MONGO_DB`;
  const env = { ...process.env, MONGO_DB: process.env[dbVar] ?? DATABASES[service] };
  // Standard input passes through (e.g. `owners create --password-stdin`).
  const input = process.stdin.isTTY ? undefined : readFileSync(0);
  const res = spawnSync(process.execPath, [cli, ...args], { env, encoding: 'utf8', ...(input ? { input } : {}) });
  if (res.status !== 0) {
    process.stderr.write(res.stderr || `${service} CLI failed\n`);
    process.exit(res.status ?? 1);
  }
  return JSON.parse(res.stdout);
}

function fail(code, message) {
  process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
const [group, command] = args;
const owner = OWNERS[group];
if (!owner) {
  fail('invalid_request', `usage: pnpm admin ${Object.keys(OWNERS).join('|')} <command> [options]`);
}
let out = run(owner, args);
if (group === 'accounts' && command === 'create') {
  const secrets = run('webhook-dispatcher', ['secrets', 'init', '--account', out.account_id]);
  out = { ...out, webhook_secrets: secrets.webhook_secrets };
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
