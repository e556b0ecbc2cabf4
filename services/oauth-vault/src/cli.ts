import { parseArgs } from 'node:util';
import { ENVIRONMENTS, type Environment } from '@tes/contracts';
import { parseEnv, ConfigError } from '@tes/config';
import { createLogger } from '@tes/logger';
import { connectMongo, ensureIndexes } from '@tes/store';
import { cliConfigSchema, publicBaseUrl, type CliConfig } from './config.js';
import { resealedDoc } from './domain/connection-docs.js';
import { resealedProviderDoc } from './domain/custom-provider-docs.js';
import { KeyRing, KeyRingError } from '@tes/sealing';
import { readSecret, VaultConfigError } from './domain/secrets.js';
import { TokenSigner } from './domain/signed-tokens.js';
import { toView } from './domain/revoke-connection.use-case.js';
import { ConnectionRepository } from './store/connection.repository.js';
import { CustomProviderRepository } from './store/custom-provider.repository.js';
import { LeaseRepository } from './store/lease.repository.js';

/**
 * Operator CLI of the vault. Prints JSON on stdout; on bad input prints
 * {"error":{code,message}} on stderr and exits 1. A leading "vault" word is accepted, so
 * `scripts/admin.mjs` can route a `vault` group here.
 */
class UsageError extends Error {}

const USAGE = `usage:
  reencrypt                                    re-seal every stored token and custom provider secret under the current key of VAULT_KEYS
  settings-link --account ID --env test|live --user ID [--ttl SECONDS]
                                               a signed, expiring link to the user's connection settings page
  connections list --account ID --env test|live --user ID
                                               a user's connections (never a token)`;

async function main(argv: string[]): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { account: { type: 'string' }, env: { type: 'string' }, user: { type: 'string' }, ttl: { type: 'string' } },
  });
  const words = positionals[0] === 'vault' ? positionals.slice(1) : positionals;
  const command = words.join(' ');
  const config = parseEnv<CliConfig>(cliConfigSchema);
  switch (command) {
    case 'settings-link': {
      const user = required(values, 'account', 'env', 'user');
      const secret = readSecret(process.env, 'VAULT_STATE_SECRET');
      if (!secret) throw new UsageError('VAULT_STATE_SECRET (or VAULT_STATE_SECRET_FILE) must be set: it signs the link the vault checks');
      const ttl = values.ttl ? positiveInt(values.ttl, '--ttl') : config.SETTINGS_LINK_TTL_S;
      const { token, expiresAt } = new TokenSigner(secret).signSettings({ acct: user.account, env: user.env, usr: user.user }, ttl);
      return { url: `${publicBaseUrl(config)}/settings?token=${encodeURIComponent(token)}`, expires_at: expiresAt.toISOString() };
    }
    case 'reencrypt':
      return withStore(config, async ({ connections, customProviders }, ring) => {
        let scanned = 0;
        let rewritten = 0;
        const failed: { connection_id: string; error: string }[] = [];
        let after = '';
        for (;;) {
          const batch = await connections.sealedWithOtherKey(ring.currentKid, 100, after);
          if (batch.length === 0) break;
          for (const doc of batch) {
            after = doc._id;
            scanned += 1;
            try {
              const r = await connections.mutate(doc._id, 'reencrypt', {
                needed: (d) => d !== null && d.key_id !== null && d.key_id !== ring.currentKid,
                apply: async (d) => (d ? resealedDoc(d, ring) : null),
              });
              if (r.changed) rewritten += 1;
            } catch (err) {
              failed.push({ connection_id: doc._id, error: (err as Error).message });
            }
          }
        }
        return {
          current_key_id: ring.currentKid,
          scanned,
          rewritten,
          failed,
          custom_providers: await resealProviders(customProviders, ring),
        };
      });
    case 'connections list': {
      const user = required(values, 'account', 'env', 'user');
      return withStore(config, async ({ connections }) => {
        const docs = await connections.listFor(user.account, user.env, user.user);
        return docs.map((d) => ({
          ...toView(d),
          key_id: d.key_id,
          expires_at: d.expires_at?.toISOString() ?? null,
          broken_reason: d.broken_reason,
        }));
      });
    }
    default:
      throw new UsageError(USAGE);
  }
}

/** Custom tools' client secrets not sealed with the current key, sealed again (a re-registration in between wins). */
async function resealProviders(repo: CustomProviderRepository, ring: KeyRing) {
  let scanned = 0;
  let rewritten = 0;
  const failed: { provider_id: string; error: string }[] = [];
  let after = '';
  for (;;) {
    const batch = await repo.sealedWithOtherKey(ring.currentKid, 100, after);
    if (batch.length === 0) break;
    for (const doc of batch) {
      after = doc._id;
      scanned += 1;
      try {
        if (await repo.replaceIfUnchanged(resealedProviderDoc(doc, ring), doc.client_secret_enc)) rewritten += 1;
      } catch (err) {
        failed.push({ provider_id: doc._id, error: (err as Error).message });
      }
    }
  }
  return { scanned, rewritten, failed };
}

interface Store {
  connections: ConnectionRepository;
  customProviders: CustomProviderRepository;
}

async function withStore<T>(config: CliConfig, fn: (store: Store, ring: KeyRing) => Promise<T>): Promise<T> {
  const keys = readSecret(process.env, 'VAULT_KEYS');
  if (!keys) throw new UsageError('VAULT_KEYS (or VAULT_KEYS_FILE) must be set: the key ring the tokens are sealed with');
  const ring = KeyRing.parse(keys, 'VAULT_KEYS');
  const logger = createLogger({ service: 'oauth-vault-cli', level: 'error' });
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  try {
    const leases = new LeaseRepository(mongo, config.LEASE_TTL_MS);
    const connections = new ConnectionRepository(mongo, leases, config.LEASE_TTL_MS + 15_000);
    const customProviders = new CustomProviderRepository(mongo);
    await ensureIndexes(mongo);
    return await fn({ connections, customProviders }, ring);
  } finally {
    await mongo.close();
  }
}

function required(
  values: { account?: string | undefined; env?: string | undefined; user?: string | undefined },
  ...names: ('account' | 'env' | 'user')[]
) {
  for (const n of names) if (!values[n]) throw new UsageError(`--${n} is required`);
  if (!ENVIRONMENTS.includes(values.env as Environment)) throw new UsageError('--env must be test or live');
  return { account: values.account as string, env: values.env as Environment, user: values.user as string };
}

function positiveInt(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${name} must be a positive integer`);
  return n;
}

main(process.argv.slice(2)).then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    const known = err instanceof UsageError || err instanceof VaultConfigError || err instanceof KeyRingError || err instanceof ConfigError;
    const code = err instanceof UsageError ? 'invalid_request' : known ? 'invalid_configuration' : 'internal_error';
    process.stderr.write(`${JSON.stringify({ error: { code, message: err instanceof Error ? err.message : String(err) } })}\n`);
    process.exit(1);
  },
);
