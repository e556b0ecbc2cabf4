import { QUEUES } from '@tes/contracts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Connection } from 'mongoose';
import { closeServer, listen } from '@tes/http';
import type { Logger } from '@tes/logger';
import { httpMetrics } from '@tes/metrics';
import { KeyRing } from '@tes/sealing';
import { connectDatabase, createBroker, type ServiceContext, type StartedService } from '@tes/service';
import { ensureIndexes, isConnected } from '@tes/store';
import { publicBaseUrl, secretsAndProviders, type Config } from './config.js';
import { Announcer, type EventSink } from './domain/announcer.js';
import type { VaultDeps } from './domain/deps.js';
import { readSecret, VaultConfigError } from './domain/secrets.js';
import { TokenSigner } from './domain/signed-tokens.js';
import { createApp } from './http/app.js';
import { Sweeper } from './jobs/sweeper.js';
import { connectionChangedPublisher } from './messaging/connection-changed.publisher.js';
import { consumeVaultRequests } from './messaging/vault-requests.consumer.js';
import { OAuthClient, ProviderCallError } from './oauth-providers/oauth-client.js';
import { loadProviders } from './oauth-providers/provider-registry.js';
import { ProviderResolver } from './oauth-providers/provider-resolver.js';
import { ConnectionRepository } from './store/connection.repository.js';
import { CustomProviderRepository } from './store/custom-provider.repository.js';
import { LeaseRepository } from './store/lease.repository.js';
import { OutboxRepository } from './store/outbox.repository.js';
import { PendingAuthorizationRepository } from './store/pending-authorization.repository.js';

export const SERVICE = 'oauth-vault';

/**
 * Loads the secrets, connects, consumes the vault's requests, runs the sweeper and serves the
 * public pages. main.ts adds the ops server and signals.
 */
export async function startVault({ config, logger, metrics }: ServiceContext<Config>): Promise<StartedService> {
  const { ring, signer } = loadSecrets(secretsAndProviders(config), config.NODE_ENV === 'production', logger);
  const mongo = await connectDatabase({ config, logger });
  const broker = createBroker({ config, logger, metrics }, SERVICE);
  const deps = buildVault({ config, mongo, sink: connectionChangedPublisher(broker), logger, ring, signer });
  countRefreshes(deps.oauth, (outcome) => metrics.tokenRefreshes.inc({ outcome }));
  const configured = deps.providers.registry
    .all()
    .filter((p) => p.configured)
    .map((p) => p.service);
  logger.info('OAuth providers', { configured, key_ids: ring.kids, current_key_id: ring.currentKid });
  await ensureIndexes(mongo);
  await broker.connect();
  // Its connection events go to the orchestrator's partitions: their queues exist first.
  await broker.declarePartitions(QUEUES.orchestratorPartition);
  await consumeVaultRequests(broker, deps, config.PREFETCH, config.SETTINGS_LINK_TTL_S);
  const sweeper = new Sweeper(deps, { intervalMs: config.SWEEP_INTERVAL_MS });
  sweeper.start();

  const publicApp = express();
  publicApp.disable('x-powered-by');
  publicApp.use(httpMetrics(metrics.httpRequestDuration));
  publicApp.use(createApp(deps));
  const publicServer = http.createServer(publicApp);
  publicServer.keepAliveTimeout = 65_000;
  await listen(publicServer, config.PUBLIC_PORT, config.HOST, 'PUBLIC_PORT');
  logger.info('public pages listening', { port: (publicServer.address() as AddressInfo).port, base_url: deps.settings.publicBaseUrl });

  return {
    ready: () => broker.isConnected && isConnected(mongo),
    async stop(timeoutMs) {
      await closeServer(publicServer);
      await sweeper.stop();
      await broker.close(timeoutMs);
    },
    close: () => mongo.close(),
  };
}

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
  Partial<Pick<Config, 'PUBLIC_RATE_LIMIT_PER_MINUTE' | 'TRUSTED_PROXIES'>> &
  /** The provider settings, read by name (patternProperties). */
  Readonly<Record<string, unknown>>;

/**
 * VAULT_KEYS and VAULT_STATE_SECRET (or their _FILE forms). Required when NODE_ENV=production;
 * in development a missing one is generated for this process, with a warning: tokens sealed
 * under an ephemeral key are lost at restart, and an ephemeral state secret breaks consents
 * that land on another replica.
 */
function loadSecrets(env: NodeJS.ProcessEnv, production: boolean, logger: Logger): { ring: KeyRing; signer: TokenSigner } {
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
    providers: new ProviderResolver(loadProviders(secretsAndProviders(config)), customProviders, o.ring),
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

/**
 * Counts token refreshes at the one place they happen: the OAuth client. `revoked`: the provider
 * refused the grant for good (ProviderCallError permanent: invalid_grant, revoked or expired
 * token, client rejected), so the connection is marked broken; `failed`: anything transient.
 */
function countRefreshes(oauth: VaultDeps['oauth'], count: (outcome: string) => void): void {
  const refresh = oauth.refresh.bind(oauth);
  oauth.refresh = async (...args: Parameters<typeof refresh>) => {
    try {
      const tokens = await refresh(...args);
      count('refreshed');
      return tokens;
    } catch (err) {
      count(err instanceof ProviderCallError && err.permanent ? 'revoked' : 'failed');
      throw err;
    }
  };
}
