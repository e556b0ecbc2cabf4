import { QUEUES } from '@tes/contracts';
import { llmOptionsFromEnv } from '@tes/planner';
import { observePartitionGroup } from '@tes/metrics';
import { connectDatabase, createBroker, replicaName, type ServiceContext, type StartedService } from '@tes/service';
import { ensureIndexes, isConnected } from '@tes/store';
import type { Config } from './config.js';
import { TaskWriter } from './domain/task-writer.js';
import { ToolAdmin } from './domain/tool-admin.js';
import { startReaper } from './jobs/reaper.js';
import { outboxRelay } from './messaging/outbox-relay.js';
import { consumePartitions } from './messaging/partition.consumer.js';
import { consumePlanner } from './messaging/planner.consumer.js';
import { TaskRepository } from './store/task.repository.js';
import { ToolRepository } from './store/tool.repository.js';

export const SERVICE = 'task-orchestrator';

/** Connects, then consumes the planner queue and the partitions and runs the reaper. main.ts adds the ops server and signals. */
export async function startOrchestrator({ config, logger, metrics }: ServiceContext<Config>): Promise<StartedService> {
  const mongo = await connectDatabase({ config, logger });
  const tasks = new TaskRepository(mongo);
  const tools = new ToolRepository(mongo);
  await ensureIndexes(mongo);
  const broker = createBroker({ config, logger, metrics }, SERVICE);
  await broker.connect();
  const llm = llmOptionsFromEnv(config);
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
  // Its task events' partition queues (the gateway's read model) exist before it publishes any.
  await broker.declarePartitions(QUEUES.gatewayTaskEvents);
  const partitions = await consumePartitions(broker, writer, new ToolAdmin(tools, logger), config.PREFETCH, {
    replica: replicaName(),
    previousPartitions: config.PARTITIONS_PREVIOUS,
    logger,
    planWithModel: llm !== undefined,
  });
  observePartitionGroup(metrics, 'orchestrator', () => ({ owned: partitions.owned(), members: partitions.liveMembers() }));
  const stopReaper = startReaper({ broker, tasks, logger, stallAfterMs: config.STALL_AFTER_MS, intervalMs: config.REAPER_INTERVAL_MS });

  return {
    ready: () => broker.isConnected && isConnected(mongo),
    async stop(timeoutMs) {
      stopReaper();
      partitions.stop();
      // Still attached after the drain: clear the outboxes published since the last batch.
      await broker.close(timeoutMs, () => writer.clearAllPublished());
    },
    close: () => mongo.close(),
  };
}
