import { loadConfigOrExit } from '@tes/config';
import { ListenError, closeServer, onShutdown, startOpsServer } from '@tes/http';
import { createLogger } from '@tes/logger';
import { createMetrics, mountMetrics } from '@tes/metrics';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes, isConnected } from '@tes/store';
import { configSchema, type Config } from './config.js';
import { TaskWriter } from './domain/task-writer.js';
import { llmOptionsFromEnv } from '@tes/planner';
import { outboxRelay } from './messaging/outbox-relay.js';
import { consumePartitions } from './messaging/partition.consumer.js';
import { consumePlanner } from './messaging/planner.consumer.js';
import { startReaper } from './messaging/reaper.js';
import { TaskRepository } from './store/task.repository.js';
import { ToolAdmin } from './domain/tool-admin.js';
import { ToolRepository } from './store/tool.repository.js';

const SERVICE = 'task-orchestrator';

async function main(): Promise<void> {
  const config = loadConfigOrExit<Config>(SERVICE, configSchema);
  const logger = createLogger({ service: SERVICE, level: config.LOG_LEVEL });
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const tasks = new TaskRepository(mongo);
  const tools = new ToolRepository(mongo);
  await ensureIndexes(mongo);
  const metrics = createMetrics(SERVICE);
  const broker = new Broker({
    url: config.AMQP_URL,
    source: SERVICE,
    logger,
    namespace: config.AMQP_NAMESPACE,
    onConsume: (queue, lag) => metrics.queueConsumeLag.observe({ queue }, lag),
  });
  await broker.connect();
  const llm = llmOptionsFromEnv();
  if (llm) logger.info('LLM planner enabled', { model: llm.model, base_url: llm.baseUrl });
  const writer = new TaskWriter({
    tasks,
    tools,
    logger,
    stepTimeoutMs: config.STEP_TIMEOUT_MS,
    stallGiveUpAfterMs: config.STALL_GIVE_UP_AFTER_MS,
    relay: outboxRelay(broker, (status) => metrics.tasksTotal.inc({ status })),
  });
  // The planner queue first: a partition may hand a create to it as soon as it consumes.
  if (llm) await consumePlanner({ broker, tools, llm, logger, concurrency: config.PLANNER_CONCURRENCY });
  await consumePartitions(broker, writer, new ToolAdmin(tools, logger), config.PREFETCH, { planWithModel: llm !== undefined });
  const stopReaper = startReaper({ broker, tasks, logger, stallAfterMs: config.STALL_AFTER_MS, intervalMs: config.REAPER_INTERVAL_MS });
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
      stopReaper();
      // Still attached after the drain: clear the outboxes published since the last batch.
      await broker.close(config.SHUTDOWN_TIMEOUT_MS, () => writer.clearAllPublished());
      await closeServer(ops);
      await mongo.close();
    },
    config.SHUTDOWN_TIMEOUT_MS + 5000,
  );
}

main().catch((err: unknown) => {
  // A port that cannot be listened on (`OPS_PORT 8090 is in use (EADDRINUSE)`): one line, no stack.
  if (err instanceof ListenError) process.stderr.write(`${SERVICE}: ${err.message}\n`);
  else process.stderr.write(`${SERVICE}: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
