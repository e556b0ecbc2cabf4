#!/usr/bin/env node
// One-shot bootstrap job (docker-compose.yml `bootstrap`, or a Kubernetes Job): creates the first
// account with `admin.mjs accounts create` and prints its JSON (account id, test and live API keys,
// webhook secrets) on stdout. Idempotent: the result is kept in $BOOTSTRAP_DIR (a volume) and a
// later run prints it again instead of creating a second account.
// Env: MONGO_URL (+ GATEWAY_MONGO_DB, WEBHOOK_DISPATCHER_MONGO_DB, read by admin.mjs),
//      BOOTSTRAP_ACCOUNT_NAME (default "demo"), BOOTSTRAP_PLAN (default "prototyping"),
//      BOOTSTRAP_DIR (default /bootstrap).
'use strict';

const { spawnSync } = require('node:child_process');
const { existsSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const dir = process.env.BOOTSTRAP_DIR || '/bootstrap';
const file = path.join(dir, 'account.json');
const name = process.env.BOOTSTRAP_ACCOUNT_NAME || 'demo';
const plan = process.env.BOOTSTRAP_PLAN || 'prototyping';

if (existsSync(file)) {
  process.stderr.write(`bootstrap: account already created; keys from ${file}:\n`);
  process.stdout.write(readFileSync(file, 'utf8'));
  process.exit(0);
}

const res = spawnSync(process.execPath, [path.join(__dirname, 'admin.mjs'), 'accounts', 'create', '--name', name, '--plan', plan], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
if (res.status !== 0) {
  process.stderr.write(`bootstrap: admin.mjs accounts create failed (exit ${res.status ?? res.signal})\n`);
  process.exit(1);
}
JSON.parse(res.stdout); // admin.mjs prints one JSON document; anything else is a failure
writeFileSync(`${file}.tmp`, res.stdout, { mode: 0o600 });
renameSync(`${file}.tmp`, file);
process.stderr.write(`bootstrap: account "${name}" created; the keys below are shown again by re-running this job:\n`);
process.stdout.write(res.stdout);
