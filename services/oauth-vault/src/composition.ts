import type { Connection } from 'mongoose';
import type { Logger } from '@tes/logger';
import { publicBaseUrl, type Config } from './config.js';
import { Announcer, type EventSink } from './domain/announcer.js';
import type { VaultDeps } from './domain/deps.js';
import { KeyRing } from '@tes/sealing';
import { readSecret, VaultConfigError } from './domain/secrets.js';
import { TokenSigner } from './domain/signed-tokens.js';
import { OAuthClient } from './providers/oauth-client.js';
import { loadProviders } from './providers/provider-registry.js';
import { ProviderResolver } from './providers/provider-resolver.js';
import { ConnectionRepository } from './store/connection.repository.js';
import { CustomProviderRepository } from './store/custom-provider.repository.js';
import { LeaseRepository } from './store/lease.repository.js';
import { OutboxRepository } from './store/outbox.repository.js';
import { PendingAuthorizationRepository } from './store/pending-authorization.repository.js';

export type VaultConfig = Pick<
  Config,
  | 'NODE_ENV'
  | 'PUBLIC_BASE_URL'
  | 'PUBLIC_PORT'
  | 'STATE_TTL_S'
  | 'PENDING_AUTH_TTL_S'
  | 'CONSENT_LINK_TTL_S'
  | 'REFRESH_MARGIN_S'
  | 'REFRESH_AHEAD_S'
  | 'PROBE_INTERVAL_S'
  | 'LEASE_TTL_MS'
  | 'PROVIDER_TIMEOUT_MS'
  | 'OUTBOUND_ALLOW_PRIVATE'
> &
  Partial<Pick<Config, 'PUBLIC_RATE_LIMIT_PER_MINUTE' | 'TRUSTED_PROXIES'>>;

/**
 * VAULT_KEYS and VAULT_STATE_SECRET (or their _FILE forms). Required when NODE_ENV=production;
 * in development a missing one is generated for this process, with a warning: tokens sealed
 * under an ephemeral key are lost at restart, and an ephemeral state secret breaks consents
 * that land on another replica.
 */
export function loadSecrets(env: NodeJS.ProcessEnv, production: boolean, logger: Logger): { ring: KeyRing; signer: TokenSigner } {
  const keys = readSecret(env, 'VAULT_KEYS');
  const stateSecret = readSecret(env, 'VAULT_STATE_SECRET');
  if (production) {
    const missing = [!keys && 'VAULT_KEYS', !stateSecret && 'VAULT_STATE_SECRET'].filter(Boolean);
    if (missing.length > 0) throw new VaultConfigError(`${missing.join(' and ')} must be set in production (NODE_ENV=production)`);
  }
  if (!keys)
    logger.warn('VAULT_KEYS is not set: using an ephemeral encryption key; stored tokens will not survive a restart (development only)');
  if (!stateSecret) logger.warn('VAULT_STATE_SECRET is not set: using an ephemeral state secret (development only)');
  return {
    ring: keys ? KeyRing.parse(keys, 'VAULT_KEYS') : KeyRing.ephemeral(),
    signer: new TokenSigner(stateSecret ?? TokenSigner.ephemeralSecret()),
  };
}

export interface BuildOptions {
  config: VaultConfig;
  env: NodeJS.ProcessEnv;
  mongo: Connection;
  sink: EventSink;
  logger: Logger;
  ring: KeyRing;
  signer: TokenSigner;
}

/** Repositories, provider resolver and clients: the use cases' dependencies. */
export function buildVault(o: BuildOptions): VaultDeps {
  const { config } = o;
  const leases = new LeaseRepository(o.mongo, config.LEASE_TTL_MS);
  const connections = new ConnectionRepository(o.mongo, leases, config.LEASE_TTL_MS + config.PROVIDER_TIMEOUT_MS + 5000);
  const outbox = new OutboxRepository(o.mongo);
  const customProviders = new CustomProviderRepository(o.mongo);
  return {
    providers: new ProviderResolver(loadProviders(o.env), customProviders, o.ring),
    customProviders,
    connections,
    pending: new PendingAuthorizationRepository(o.mongo),
    leases,
    announcer: new Announcer(outbox, connections, o.sink, o.logger, config.LEASE_TTL_MS + 60_000),
    ring: o.ring,
    signer: o.signer,
    oauth: new OAuthClient(config.PROVIDER_TIMEOUT_MS, { allowPrivate: config.OUTBOUND_ALLOW_PRIVATE }),
    logger: o.logger,
    settings: {
      publicBaseUrl: publicBaseUrl(config),
      stateTtlS: config.STATE_TTL_S,
      pendingTtlS: config.PENDING_AUTH_TTL_S,
      consentLinkTtlS: config.CONSENT_LINK_TTL_S,
      refreshMarginMs: config.REFRESH_MARGIN_S * 1000,
      leaseTtlMs: config.LEASE_TTL_MS,
      refreshAheadMs: config.REFRESH_AHEAD_S * 1000,
      probeIntervalMs: config.PROBE_INTERVAL_S * 1000,
      ...(config.PUBLIC_RATE_LIMIT_PER_MINUTE !== undefined ? { publicRateLimitPerMinute: config.PUBLIC_RATE_LIMIT_PER_MINUTE } : {}),
      trustedProxies: (config.TRUSTED_PROXIES ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean),
    },
  };
}
