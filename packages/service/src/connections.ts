import type { Logger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import type { Metrics } from '@tes/metrics';
import { connectMongo } from '@tes/store';
import type { Connection } from 'mongoose';

/** What every service's configuration holds for its database and broker (@tes/config's commonEnv). */
interface ConnectionSettings {
  MONGO_URL: string;
  MONGO_DB: string;
  MONGO_MAX_POOL_SIZE: number;
  AMQP_URL: string;
  AMQP_NAMESPACE: string;
  AMQP_HEARTBEAT_S: number;
  AMQP_QUEUE_TYPE: 'classic' | 'quorum';
  PARTITIONS?: number | undefined;
  TES_DB_COMMAND_STATS?: string | undefined;
}

interface Context {
  config: ConnectionSettings;
  logger: Logger;
  metrics?: Metrics | undefined;
}

/** The service's database (commands counted when TES_DB_COMMAND_STATS is set: benchmarks). */
export function connectDatabase({ config, logger }: Context): Promise<Connection> {
  return connectMongo({
    url: config.MONGO_URL,
    dbName: config.MONGO_DB,
    logger,
    maxPoolSize: config.MONGO_MAX_POOL_SIZE,
    commandStatsDir: config.TES_DB_COMMAND_STATS,
  });
}

/** The service's broker client (heartbeat AMQP_HEARTBEAT_S), not yet connected, reporting each queue's consume lag to its metrics. */
export function createBroker({ config, logger, metrics }: Context, source: string): Broker {
  return new Broker({
    url: config.AMQP_URL,
    source,
    logger,
    namespace: config.AMQP_NAMESPACE,
    heartbeatSeconds: config.AMQP_HEARTBEAT_S,
    queueType: config.AMQP_QUEUE_TYPE,
    ...(config.PARTITIONS !== undefined ? { partitions: config.PARTITIONS } : {}),
    ...(metrics ? { onConsume: (queue: string, lag: number) => metrics.queueConsumeLag.observe({ queue }, lag) } : {}),
  });
}
