#!/usr/bin/env node
// Checks the environment that docker-compose.yml and the Kubernetes overlays give each service
// against the service's own env schema (services/<service>/dist/config.js, built by `pnpm build`):
// every variable must be one the service reads, and parseEnv (the same code as at boot) must accept
// the values. Each environment is taken as the container sees it: the image's own ENV (deploy/Dockerfile
// sets NODE_ENV=production) under the file's variables. With NODE_ENV=production a service must get
// the secrets it refuses to start without (PRODUCTION_SECRETS): the gateway's dashboard session
// secret, the vault's key ring and state secret, the dispatcher's key ring. The vault must be passed every
// provider's client id and secret (empty is allowed), so that what .env or the Secret holds reaches it.
// Input: the JSON files written by `validate compose|k8s -env-out`.
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

// Secrets that a service refuses to start without when NODE_ENV=production (its schema has them optional).
// `file`: a NAME_FILE variable (a path to the value) is accepted instead.
const PRODUCTION_SECRETS = {
  // services/gateway/src/dashboard/session.ts (dashboardSessionSecret)
  gateway: [{ name: 'DASHBOARD_SESSION_SECRET', file: false }],
  // services/oauth-vault/src/domain/secrets.ts
  'oauth-vault': [
    { name: 'VAULT_KEYS', file: true },
    { name: 'VAULT_STATE_SECRET', file: true },
  ],
  // services/webhook-dispatcher/src/secret-keys.ts
  'webhook-dispatcher': [{ name: 'WEBHOOK_SECRET_KEYS', file: true }],
};

/**
 * The ENV that the service images set (deploy/Dockerfile: the `service` stage and the stages it is
 * built FROM, e.g. `runtime` with NODE_ENV=production): every container starts with it, and the
 * compose file or the manifests only add to it. Values that use `$` (build arguments) are left out.
 */
function imageEnv() {
  const dockerfile = path.join(root, 'deploy/Dockerfile');
  if (!existsSync(dockerfile)) return {};
  const stages = new Map();
  let current;
  // Continuation lines joined: one instruction per line.
  const text = readFileSync(dockerfile, 'utf8').replace(/\\\r?\n/g, ' ');
  for (const line of text.split('\n')) {
    const from = /^\s*FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      current = { base: from[1], env: {} };
      if (from[2]) stages.set(from[2], current);
      continue;
    }
    const env = /^\s*ENV\s+(.*)$/i.exec(line);
    if (!env || !current) continue;
    for (const pair of env[1].trim().split(/\s+/)) {
      const i = pair.indexOf('=');
      if (i > 0 && !pair.includes('$')) current.env[pair.slice(0, i)] = pair.slice(i + 1);
    }
  }
  const chain = [];
  for (let stage = stages.get('service'); stage && !chain.includes(stage); stage = stages.get(stage.base)) chain.unshift(stage);
  return Object.assign({}, ...chain.map((s) => s.env));
}

/**
 * The provider variables the vault reads that `env` does not pass: every built-in provider's
 * client id and secret (services/oauth-vault/src/oauth-providers/provider-registry.ts), and those of the
 * custom providers the env declares (OAUTH_CUSTOM_PROVIDERS); NAME_FILE counts as passed. Passed
 * empty is fine (the provider is then unconfigured); not passed at all, .env or the Secret cannot
 * reach the vault.
 */
async function missingProviderVars(env) {
  const { BUILT_IN_PROVIDERS, envPrefix } = await import(
    pathToFileURL(path.join(root, 'services/oauth-vault/dist/oauth-providers/provider-registry.js')).href
  );
  const custom = (env.OAUTH_CUSTOM_PROVIDERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const services = [...BUILT_IN_PROVIDERS.map((p) => p.service), ...custom];
  return services
    .flatMap((s) => [`${envPrefix(s)}_CLIENT_ID`, `${envPrefix(s)}_CLIENT_SECRET`])
    .filter((name) => !(name in env) && !(`${name}_FILE` in env));
}

/** Problems with the production secrets of `service` in `env` (the container's view). */
function missingSecrets(service, env) {
  if (env.NODE_ENV !== 'production') return [];
  return (PRODUCTION_SECRETS[service] ?? [])
    .filter((s) => !env[s.name] && !(s.file && env[`${s.name}_FILE`]))
    .map((s) => (s.file ? `${s.name} (or ${s.name}_FILE)` : s.name));
}

async function main() {
  const configPath = path.join(root, 'packages/config/dist/index.js');
  if (!existsSync(configPath)) {
    console.log('  skipped: packages/config is not built (run pnpm build)');
    return 2;
  }
  const { parseEnv } = await import(pathToFileURL(configPath).href);

  const image = imageEnv();
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
        // Variables with names made of a prefix (the vault's provider settings): patternProperties.
        const patterns = Object.keys(configSchema.patternProperties ?? {}).map((p) => new RegExp(p));
        const known = (k) => k in configSchema.properties || patterns.some((p) => p.test(k));
        const unknown = Object.keys(env).filter((k) => !known(k) && !(k in EXTRA));
        for (const k of Object.keys(env).filter((k) => !known(k) && k in EXTRA)) notes.add(`${k}: ${EXTRA[k]}`);
        const seen = { ...image, ...env };
        if (service === 'oauth-vault') {
          const notPassed = await missingProviderVars(seen);
          if (notPassed.length > 0) {
            console.log(`  error: ${set}/${service}: provider variables not passed to the vault: ${notPassed.join(', ')}`);
            failures++;
            continue;
          }
        }
        const missing = missingSecrets(service, seen);
        if (missing.length > 0) {
          const from = 'NODE_ENV' in env ? '' : ' (the image default)';
          console.log(`  error: ${set}/${service}: NODE_ENV=production${from} needs ${missing.join(' and ')}`);
          failures++;
          continue;
        }
        try {
          parseEnv(configSchema, seen);
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
