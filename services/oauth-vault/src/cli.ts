import { ENVIRONMENTS } from '@tes/contracts';
import { commandOrExit, oneOf, UsageError } from '@tes/cli';
import { parseEnv, ConfigError } from '@tes/config';
import { createLogger } from '@tes/logger';
import { connectMongo, ensureIndexes } from '@tes/store';
import { COMMANDS } from './cli/commands.js';
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
 * Operator CLI of the vault. Prints JSON on stdout; on bad input prints {"error":{code,message}}
 * on stderr and exits 1 (2 when the command line does not parse: see @tes/cli). The leading
 * "vault" word that `scripts/admin.mjs` routes here may be left out.
 */
async function main(argv: string[]): Promise<unknown> {
  const command = commandOrExit(COMMANDS, argv[0] === 'vault' ? argv : ['vault', ...argv]);
  const config = parseEnv<CliConfig>(cliConfigSchema);
  switch (command.name) {
    case 'vault settings-link': {
      const { values } = command;
      const env = oneOf('--env', values.env, ENVIRONMENTS);
      const secret = readSecret(config, 'VAULT_STATE_SECRET');
      if (!secret) throw new UsageError('VAULT_STATE_SECRET (or VAULT_STATE_SECRET_FILE) must be set: it signs the link the vault checks');
      const ttl = values.ttl ? positiveInt(values.ttl, '--ttl') : config.SETTINGS_LINK_TTL_S;
      const { token, expiresAt } = new TokenSigner(secret).signSettings({ acct: values.account, env, usr: values.user }, ttl);
      return { url: `${publicBaseUrl(config)}/settings?token=${encodeURIComponent(token)}`, expires_at: expiresAt.toISOString() };
    }
    case 'vault reencrypt':
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
    case 'vault connections list': {
      const { account, user } = command.values;
      const env = oneOf('--env', command.values.env, ENVIRONMENTS);
      return withStore(config, async ({ connections }) => {
        const docs = await connections.listFor(account, env, user);
        return docs.map((d) => ({
          ...toView(d),
          key_id: d.key_id,
          expires_at: d.expires_at?.toISOString() ?? null,
          broken_reason: d.broken_reason,
        }));
      });
    }
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
  const keys = readSecret(config, 'VAULT_KEYS');
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
