import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { QUEUES } from '@tes/contracts';
import { closeServer, listen } from '@tes/http';
import { httpMetrics, observeCreateBacklog, observePartitionGroup } from '@tes/metrics';
import { changeAnnouncer } from '@tes/messaging';
import { connectDatabase, createBroker, replicaName, type ServiceContext, type StartedService } from '@tes/service';
import { ensureIndexes, isConnected } from '@tes/store';
import type { Config } from './config.js';
import { createApp } from './http/app.js';
import { createPlainHttpApp } from './http/plain-http.js';
import { dashboardOptions } from './dashboard/index.js';
import { consumeTaskEvents } from './messaging/task-events.consumer.js';
import { followCredentialChanges } from './messaging/credential-changes.js';
import { CredentialsCache } from './domain/credentials-cache.js';
import { CreateBacklog } from './domain/create-backlog.js';
import { LAST_USED_INTERVAL_MS, LastUsedThrottle } from './domain/last-used.js';
import { startSweeper } from './jobs/sweeper.js';
import { AccountRepository } from './store/account.repository.js';
import { IdempotencyRepository } from './store/idempotency.repository.js';
import { RateLimitRepository } from './store/rate-limit.repository.js';
import { TaskViewRepository } from './store/task-view.repository.js';
import { loadTls } from './tls.js';

export const SERVICE = 'gateway';
/** How long a dashboard change waits for its announcement to be confirmed before it is answered anyway. */
const ANNOUNCE_WAIT_MS = 2000;

/**
 * Connects, follows task events and credential changes, and listens: the public API on HTTPS and
 * the plain listener that refuses it. main.ts adds the ops server and signals.
 */
export async function startGateway({ config, logger, metrics }: ServiceContext<Config>): Promise<StartedService> {
  const tls = await loadTls(config.TLS_CERT_FILE, config.TLS_KEY_FILE, logger);
  const mongo = await connectDatabase({ config, logger });
  const accounts = new AccountRepository(mongo);
  const views = new TaskViewRepository(mongo);
  const rateLimits = new RateLimitRepository(mongo);
  const idempotencyKeys = new IdempotencyRepository(mongo);
  const trusted = config.TRUSTED_PROXIES.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const dashboard = dashboardOptions(mongo, logger, trusted, config);
  await ensureIndexes(mongo);
  const broker = createBroker({ config, logger, metrics }, SERVICE);
  await broker.connect();
  // The orchestrator's partition queues exist before this replica sends any command to them.
  await broker.declarePartitions(QUEUES.orchestratorPartition);
  const readModel = await consumeTaskEvents(broker, views, {
    replica: replicaName(),
    logger,
    previousPartitions: config.PARTITIONS_PREVIOUS,
  });
  observePartitionGroup(metrics, 'gateway.task-events', () => ({ owned: readModel.owned(), members: readModel.liveMembers() }));
  // Keys and accounts are cached while this replica hears of every change to them (its own
  // queue). A change made here (the dashboard) is dropped locally at once, and answered once the
  // broker has confirmed its announcement to the other replicas (or after ANNOUNCE_WAIT_MS, while
  // the announcement keeps trying in the background).
  const credentials = new CredentialsCache(accounts, config.AUTH_CACHE_MS);
  const announcer = changeAnnouncer(broker, 'gateway.credentials_changed', logger);
  accounts.onChange(async (accountId) => {
    credentials.invalidate(accountId);
    await Promise.race([announcer.announce({ account_id: accountId }), new Promise((r) => setTimeout(r, ANNOUNCE_WAIT_MS).unref())]);
  });
  await followCredentialChanges(broker, credentials, replicaName());

  // When each key was last used: one conditional write per key per minute per replica, off the request path.
  const lastUsed = new LastUsedThrottle(
    (keyId, at) => accounts.usage.touch(keyId, at, LAST_USED_INTERVAL_MS),
    (err) => logger.warn('last-used write failed', { error: (err as Error).message }),
  );

  const createBacklog = new CreateBacklog(config.CREATE_SHED_AFTER_MS);
  observeCreateBacklog(metrics, () => ({ waiting: createBacklog.size, oldestWaitSeconds: createBacklog.oldestWaitMs() / 1000 }));
  const api = createApp({
    broker,
    accounts,
    credentials,
    lastUsed,
    views,
    rateLimits,
    idempotencyKeys,
    logger,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    createTimeoutMs: config.CREATE_TIMEOUT_MS,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    idempotencyLeaseMs: config.IDEMPOTENCY_LEASE_MS,
    httpMetrics: httpMetrics(metrics.httpRequestDuration),
    dashboard,
    createBacklog,
    onCreateShed: () => metrics.createsShed.inc(),
  });
  const stopSweeper = startSweeper({ keys: idempotencyKeys, rateLimits, logger, intervalMs: config.SWEEP_INTERVAL_MS });
  const secure = https.createServer({ cert: tls.cert, key: tls.key }, api);
  const plainApp = createPlainHttpApp(api, trusted, logger);
  const plain = http.createServer(plainApp);
  // An Expect other than 100-continue would get Node's bare 417; HTTP allows ignoring it,
  // so such a request is answered by the app like any other (envelope, X-Request-Id).
  secure.on('checkExpectation', api);
  plain.on('checkExpectation', plainApp);
  for (const server of [secure, plain]) {
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    server.requestTimeout = 30_000;
  }
  await listen(secure, config.PORT, config.HOST, 'PORT');
  await listen(plain, config.HTTP_PORT, config.HOST, 'HTTP_PORT');
  logger.info('public API listening', {
    https: `https://${config.HOST}:${(secure.address() as AddressInfo).port}/v1`,
    http_rejecting: (plain.address() as AddressInfo).port,
  });

  return {
    ready: () => broker.isConnected && isConnected(mongo),
    async stop(timeoutMs) {
      // Stop taking requests, let in-flight ones finish, then stop consuming.
      stopSweeper();
      readModel.stop();
      await Promise.all([closeServer(secure as unknown as http.Server), closeServer(plain)]);
      await broker.close(timeoutMs);
    },
    close: () => mongo.close(),
  };
}
