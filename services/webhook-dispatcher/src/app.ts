import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Connection } from 'mongoose';
import type { Logger } from '@tes/logger';
import type { Metrics } from '@tes/metrics';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes, isConnected } from '@tes/store';
import { parseHostList, type Config } from './config.js';
import { HttpSender } from './delivery/http-sender.js';
import { DeliveryScheduler } from './domain/delivery-scheduler.js';
import { parseRetrySchedule } from './domain/retry-schedule.js';
import { consumeTaskEvents } from './messaging/task-event.consumer.js';
import { consumeWebhookAdmin } from './messaging/webhook-admin.consumer.js';
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
  const guard = { allowedHosts: parseHostList(config.WEBHOOK_ALLOWED_HOSTS) };
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const repos = createRepositories(mongo);
  await ensureIndexes(mongo);

  const scheduler = new DeliveryScheduler(
    {
      ...repos,
      sender: metrics ? countedSender(new HttpSender(guard), metrics) : new HttpSender(guard),
      policy,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      leaseMs: config.WEBHOOK_TIMEOUT_MS + config.CLAIM_MARGIN_MS,
      holder: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
      logger,
    },
    {
      pollIntervalMs: config.POLL_INTERVAL_MS,
      concurrency: config.DELIVERY_CONCURRENCY,
      endpointConcurrency: config.ENDPOINT_CONCURRENCY,
      orderGapWaitMs: config.ORDER_GAP_WAIT_MS,
    },
  );

  const broker = new Broker({
    url: config.AMQP_URL,
    source: SERVICE,
    logger,
    namespace: config.AMQP_NAMESPACE,
    ...(metrics ? { onConsume: (queue: string, lag: number) => metrics.queueConsumeLag.observe({ queue }, lag) } : {}),
  });
  try {
    await broker.connect();
    await consumeTaskEvents(
      broker,
      { events: repos.events, endpoints: repos.endpoints, logger, onStored: () => scheduler.wake() },
      config.PREFETCH,
    );
    await consumeWebhookAdmin(broker, { ...repos, guard, logger, onStored: () => scheduler.wake() });
  } catch (err) {
    await broker.close(0).catch(() => undefined);
    await mongo.close().catch(() => undefined);
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
        await mongo.close();
      })();
      return stopped;
    },
  };
}

/** Counts each webhook POST by outcome, at the one place they are sent. */
function countedSender(sender: HttpSender, metrics: Metrics): Pick<HttpSender, 'send'> {
  return {
    async send(req) {
      const result = await sender.send(req);
      const outcome = result.ok ? 'delivered' : result.status_code === null ? 'network_error' : 'http_error';
      metrics.webhookAttempts.inc({ outcome });
      return result;
    },
  };
}
