#!/usr/bin/env node
// Checks the environment that docker-compose.yml and the Kubernetes overlays give each service
// against the service's own env schema (services/<service>/dist/config.js, built by `pnpm build`):
// every variable must be one the service reads, and parseEnv (the same code as at boot) must accept
// the values. Input: the JSON files written by `validate compose|k8s -env-out`.
// Usage: node deploy/tools/check-env.cjs ENV.json...   Exit 1 on any problem, 2 if not built.
// CommonJS that imports the services' ESM builds with import().
'use strict';

const { existsSync, readFileSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const root = path.resolve(__dirname, '../..');
// Read by the runtime or by a service that has not landed it yet; listed so a typo still fails.
const EXTRA = {
  NODE_ENV: 'read by node and libraries',
  NODE_OPTIONS: 'read by node',
};
// The oauth-vault reads its secrets and its providers' settings outside configSchema
// (domain/secrets.ts, providers/provider-registry.ts).
const VAULT_EXTRA =
  /^(VAULT_KEYS|VAULT_STATE_SECRET|[A-Z][A-Z0-9_]*_(CLIENT_ID|CLIENT_SECRET|AUTHORIZE_URL|TOKEN_URL|REVOCATION_URL|SCOPES|AUTHORIZE_PARAMS))(_FILE)?$/;
const extra = (service, key) => key in EXTRA || (service === 'oauth-vault' && VAULT_EXTRA.test(key));

async function main() {
  const configPath = path.join(root, 'packages/config/dist/index.js');
  if (!existsSync(configPath)) {
    console.log('  skipped: packages/config is not built (run pnpm build)');
    return 2;
  }
  const { parseEnv } = await import(pathToFileURL(configPath).href);

  let failures = 0;
  let passed = 0;
  const notes = new Set();
  for (const file of process.argv.slice(2)) {
    const sets = JSON.parse(readFileSync(file, 'utf8'));
    for (const [set, services] of Object.entries(sets)) {
      for (const [service, env] of Object.entries(services)) {
        const built = path.join(root, 'services', service, 'dist/config.js');
        if (!existsSync(built)) {
          console.log(`  error: ${set}/${service}: ${path.relative(root, built)} missing (run pnpm build)`);
          failures++;
          continue;
        }
        const { configSchema } = await import(pathToFileURL(built).href);
        const known = new Set(Object.keys(configSchema.properties));
        const unknown = Object.keys(env).filter((k) => !known.has(k) && !extra(service, k));
        for (const k of Object.keys(env).filter((k) => !known.has(k) && k in EXTRA)) notes.add(`${k}: ${EXTRA[k]}`);
        if (service === 'oauth-vault' && env.NODE_ENV === 'production') {
          const missing = ['VAULT_KEYS', 'VAULT_STATE_SECRET'].filter((k) => !env[k] && !env[`${k}_FILE`]);
          if (missing.length > 0) {
            console.log(`  error: ${set}/${service}: NODE_ENV=production needs ${missing.join(' and ')}`);
            failures++;
            continue;
          }
        }
        try {
          parseEnv(configSchema, env);
          if (unknown.length === 0) {
            passed++;
            continue;
          }
        } catch (err) {
          console.log(`  error: ${set}/${service}: ${String(err.message).replace(/\n\s*/g, ' ')}`);
          failures++;
        }
        if (unknown.length > 0) {
          console.log(`  error: ${set}/${service}: variables the service does not read: ${unknown.join(', ')}`);
          failures++;
        }
      }
    }
  }
  for (const n of notes) console.log(`  note: ${n}`);
  console.log(`  summary: ${passed} service environments accepted by their config schema, ${failures} rejected`);
  return failures > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.log(`  error: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
