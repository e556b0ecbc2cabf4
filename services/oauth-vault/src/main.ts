import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { loadConfigOrExit } from '@tes/config';
import { ListenError, closeServer, listen, onShutdown, startOpsServer } from '@tes/http';
import { createLogger } from '@tes/logger';
import { createMetrics, httpMetrics, mountMetrics } from '@tes/metrics';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes, isConnected } from '@tes/store';
import { KeyRingError } from '@tes/sealing';
import { configSchema, type Config } from './config.js';
import { VaultConfigError } from './domain/secrets.js';
import type { VaultDeps } from './domain/deps.js';
import { createApp } from './http/app.js';
import { Sweeper } from './jobs/sweeper.js';
import { connectionChangedPublisher } from './messaging/connection-changed.publisher.js';
import { consumeVaultRequests } from './messaging/vault-requests.consumer.js';
import { ProviderCallError } from './oauth-providers/oauth-client.js';
import { buildVault, loadSecrets } from './vault.js';

const SERVICE = 'oauth-vault';

async function main(): Promise<void> {
  const config = loadConfigOrExit<Config>(SERVICE, configSchema);
  const logger = createLogger({ service: SERVICE, level: config.LOG_LEVEL });
  const { ring, signer } = loadSecrets(process.env, config.NODE_ENV === 'production', logger);
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const metrics = createMetrics(SERVICE);
  const broker = new Broker({
    url: config.AMQP_URL,
    source: SERVICE,
    logger,
    namespace: config.AMQP_NAMESPACE,
    onConsume: (queue, lag) => metrics.queueConsumeLag.observe({ queue }, lag),
  });
  const deps = buildVault({ config, env: process.env, mongo, sink: connectionChangedPublisher(broker), logger, ring, signer });
  countRefreshes(deps.oauth, (outcome) => metrics.tokenRefreshes.inc({ outcome }));
  const configured = deps.providers.registry
    .all()
    .filter((p) => p.configured)
    .map((p) => p.service);
  logger.info('OAuth providers', { configured, key_ids: ring.kids, current_key_id: ring.currentKid });
  await ensureIndexes(mongo);
  await broker.connect();
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
  const ops = await startOpsServer({
    port: config.OPS_PORT,
    host: config.OPS_HOST,
    logger,
    ready: () => broker.isConnected && isConnected(mongo),
    extend: (app) => mountMetrics(app, metrics.registry),
  });

  onShutdown(
    logger,
    async () => {
      await closeServer(publicServer);
      await sweeper.stop();
      await broker.close(config.SHUTDOWN_TIMEOUT_MS);
      await closeServer(ops);
      await mongo.close();
    },
    config.SHUTDOWN_TIMEOUT_MS + 5000,
  );
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

main().catch((err: unknown) => {
  // A port that cannot be listened on (`PUBLIC_PORT 8093 is in use (EADDRINUSE)`): one line, no stack.
  if (err instanceof ListenError) {
    process.stderr.write(`${SERVICE}: ${err.message}\n`);
    process.exit(1);
  }
  const text =
    err instanceof VaultConfigError || err instanceof KeyRingError ? err.message : err instanceof Error ? err.stack : String(err);
  process.stderr.write(`${SERVICE}: failed to start: ${text}\n`);
  process.exit(1);
});
