import type { Connection } from 'mongoose';
import type { Logger } from '@tes/logger';
import type { Metrics } from '@tes/metrics';
import type { Broker } from '@tes/messaging';
import { connectDatabase, createBroker, replicaName } from '@tes/service';
import { ensureIndexes, isConnected } from '@tes/store';
import { parseHostList, type Config } from './config.js';
import { HttpSender } from './delivery/http-sender.js';
import { crashHook } from './crash-point.js';
import { DeliveryScheduler } from './scheduling/delivery-scheduler.js';
import { HolderLiveness, claimsWithLiveness } from './scheduling/holder-liveness.js';
import { parseRetrySchedule } from './domain/retry-schedule.js';
import { configAnnouncer, followConfigChanges } from './messaging/config-changes.js';
import { consumeTaskEvents } from './messaging/task-event.consumer.js';
import { consumeWebhookAdmin } from './messaging/webhook-admin.consumer.js';
import { loadSecretKeys } from './secret-keys.js';
import { ConfigCache } from './store/config-cache.js';
import { createRepositories, type Repositories } from './store/repositories.js';

export const SERVICE = 'webhook-dispatcher';

export interface Dispatcher {
  mongo: Connection;
  broker: Broker;
  repos: Repositories;
  scheduler: DeliveryScheduler;
  /** Connected to its dependencies and taking work. */
  ready(): boolean;
  /** Stops consuming and polling, lets deliveries in flight finish within `timeoutMs`, closes. */
  stop(timeoutMs?: number): Promise<void>;
}

/** Connects, declares, and starts consuming and delivering. main.ts adds the ops server and signals. */
export async function startDispatcher(config: Config, logger: Logger, metrics?: Metrics): Promise<Dispatcher> {
  const policy = parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE_MS);
  const guard = { allowedHosts: parseHostList(config.WEBHOOK_ALLOWED_HOSTS), allowPrivate: config.OUTBOUND_ALLOW_PRIVATE };
  const ring = loadSecretKeys(config, (message) => logger.warn(message));
  const mongo = await connectDatabase({ config, logger });
  if (metrics) countDbCommands(mongo, metrics);
  const repos = createRepositories(mongo, ring);
  await ensureIndexes(mongo);
  await sealLegacySecrets(repos, logger);

  const http = new HttpSender(guard, config.DELIVERY_CONCURRENCY);
  const configCache = new ConfigCache(repos, config.WEBHOOK_CONFIG_CACHE_MS);
  const checkpoint = crashHook(config.DISPATCHER_CRASH_POINT);
  const holder = replicaName();
  const leaseMs = config.WEBHOOK_TIMEOUT_MS + config.CLAIM_MARGIN_MS;
  // The first beat is written before this process claims or stores anything.
  const liveness = new HolderLiveness({ beats: repos.beats, holder, logger }, config.HEARTBEAT_INTERVAL_MS);
  await liveness.start();
  const scheduler = new DeliveryScheduler(
    {
      ...repos,
      claims: claimsWithLiveness(repos.claims, liveness),
      config: configCache,
      sender: metrics ? countedSender(http, metrics) : http,
      policy,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      leaseMs,
      holder,
      logger,
      checkpoint,
    },
    {
      pollIntervalMs: config.POLL_INTERVAL_MS,
      concurrency: config.DELIVERY_CONCURRENCY,
      endpointConcurrency: config.ENDPOINT_CONCURRENCY,
      orderGapWaitMs: config.ORDER_GAP_WAIT_MS,
    },
    liveness,
  );

  const broker = createBroker({ config, logger, metrics }, SERVICE);
  try {
    await broker.connect();
    // Tell every replica of the changes stored here; be told of theirs and of the operator CLI's.
    const announcer = configAnnouncer(broker, logger);
    repos.endpoints.onChange(announcer.announce);
    repos.secrets.onChange(announcer.announce);
    await followConfigChanges(broker, configCache, holder, config.WEBHOOK_CONFIG_CACHE_FOLLOWED_MS);
    await consumeTaskEvents(
      broker,
      { ...repos, config: configCache, logger, handOffMs: leaseMs, scheduler, holder, checkpoint },
      config.PREFETCH,
    );
    await consumeWebhookAdmin(broker, { ...repos, guard, logger, onStored: () => scheduler.wake() });
  } catch (err) {
    await liveness.stop();
    await broker.close(0).catch(() => undefined);
    await mongo.close().catch(() => undefined);
    http.close();
    throw err;
  }
  scheduler.start();
  logger.info('webhook dispatcher started', { retry_schedule_ms: policy.delaysMs, timeout_ms: config.WEBHOOK_TIMEOUT_MS });

  let stopped: Promise<void> | undefined;
  return {
    mongo,
    broker,
    repos,
    scheduler,
    ready: () => broker.isConnected && isConnected(mongo),
    stop(timeoutMs = config.SHUTDOWN_TIMEOUT_MS) {
      stopped ??= (async () => {
        await Promise.all([broker.close(timeoutMs), scheduler.stop(timeoutMs)]);
        // Nothing of ours in flight any more: the others may take what is left at once.
        await liveness.stop();
        http.close();
        await mongo.close();
      })();
      return stopped;
    },
  };
}

/**
 * Secrets stored in plaintext before sealing are sealed at boot (and any one read earlier by
 * another replica on read). Every replica may run this at once: each update is conditional.
 * A failure only delays it to the next read or boot, so it does not stop the start.
 */
async function sealLegacySecrets(repos: Repositories, logger: Logger): Promise<void> {
  try {
    const { sealed } = await repos.secrets.sealAll(false);
    if (sealed > 0) logger.info('sealed webhook secrets stored in plaintext', { sealed });
  } catch (err) {
    logger.warn('could not seal the plaintext webhook secrets at boot; they are sealed when read', {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/**
 * Database commands by name (`webhook_dispatcher_db_commands_total`), when the driver's command
 * monitoring is on (`monitorCommands=true` in MONGO_URL): how many round trips the deliveries
 * cost (bench/dispatcher-scaling.ts reads it). Off by default: it costs an event per command.
 */
function countDbCommands(mongo: Connection, metrics: Metrics): void {
  const client = mongo.getClient();
  if (!client.options.monitorCommands) return;
  const counts = new Map<string, number>();
  client.on('commandStarted', (e: { commandName: string }) => counts.set(e.commandName, (counts.get(e.commandName) ?? 0) + 1));
  const name = 'webhook_dispatcher_db_commands_total';
  const help = 'Database commands sent by the webhook dispatcher, by command name (only with command monitoring on)';
  const collect = () => ({
    name,
    help,
    type: 'counter',
    aggregator: 'sum',
    values: [...counts].map(([command, value]) => ({ value, labels: { command } })),
  });
  // A counter in prom-client's metric shape, on the service's registry (no prom-client dependency here).
  metrics.registry.registerMetric({
    name,
    help,
    type: 'counter',
    aggregator: 'sum',
    get: async () => collect(),
    reset: () => counts.clear(),
  } as never);
}

/** Counts each webhook POST and observes its duration, by outcome, at the one place they are sent. */
function countedSender(sender: HttpSender, metrics: Metrics): Pick<HttpSender, 'send'> {
  return {
    async send(req) {
      const result = await sender.send(req);
      metrics.webhookAttempts.inc({ outcome: result.outcome });
      metrics.webhookDeliveryLatency.observe({ outcome: result.outcome }, result.latency_ms / 1000);
      return result;
    },
  };
}
