import { QUEUES, type RefusalReply, type TaskReply } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { isPermanentFailure, PartitionGroup, type Broker, type DeliveryOn } from '@tes/messaging';
import { PartitionMemory } from '../domain/partition-memory.js';
import type { TaskWriter } from '../domain/task-writer.js';
import type { ToolAdmin } from '../domain/tool-admin.js';

/**
 * Every replica consumes every partition; single-active-consumer makes exactly one of them the
 * writer of each partition at a time, and the partition group spreads the partitions over the
 * live replicas (PartitionGroup). Within a partition, messages are handed over as they arrive
 * (up to `prefetch` at once) and queued, in that order, on the lanes of their task or account
 * (TaskWriter), so one account's tasks advance side by side while each task's changes, and each
 * account's admission, stay one at a time. Each partition has its PartitionMemory: entered with
 * every message (a new consumer attachment empties it), forgotten whenever a message fails, and
 * its published outboxes cleared before the partition is handed on.
 */
export async function consumePartitions(
  broker: Broker,
  writer: TaskWriter,
  tools: ToolAdmin,
  prefetch: number,
  options: PartitionOptions,
): Promise<PartitionGroup> {
  const memories = Array.from({ length: broker.partitions }, () => writer.remember(new PartitionMemory()));
  const memory = (p: number) => memories[p] ?? writer.remember(new PartitionMemory());
  return PartitionGroup.start({
    broker,
    group: 'orchestrator',
    replica: options.replica,
    logger: options.logger,
    previousPartitions: options.previousPartitions,
    queue: QUEUES.orchestratorPartition,
    // Not serial: the lanes keep each task's and each account's order (the handler queues a
    // message on its lane before its first await, so in the order the broker hands them over).
    consume: { prefetch, serial: false },
    handler: (p) => {
      const mem = memory(p);
      return async (d) => {
        mem.enter(d.consumer);
        try {
          await handle(d, mem, writer, tools, options);
        } catch (err) {
          mem.forget();
          // Dead-lettered at once by the broker: answer the requester now rather than let it time out.
          if (isPermanentFailure(err)) await refuse(d).catch(() => undefined);
          throw err;
        }
      };
    },
    beforeRelease: (p) => writer.clearPublished(memory(p)),
  });
}

/**
 * The answer to a request whose write the database refused for good (a value it cannot store):
 * 400 invalid_request at the gateway. The database's own message stays in the log (it can name
 * internals); the gateway's schema names the field for what it knows to refuse.
 */
const REFUSED_BY_DATABASE: RefusalReply = {
  ok: false,
  error: { code: 'invalid_request', message: 'The request holds a value the database cannot store; nothing was created or changed' },
};

type PartitionDelivery = DeliveryOn<ReturnType<typeof QUEUES.orchestratorPartition>>;

/** Answers a request with REFUSED_BY_DATABASE (a plain message has no requester). */
function refuse(d: PartitionDelivery): Promise<void> {
  switch (d.type) {
    case 'task.create':
    case 'task.cancel':
    case 'tool.register':
    case 'tool.list':
    case 'tool.delete':
    case 'task.inspect':
      return d.reply(REFUSED_BY_DATABASE);
    default:
      return Promise.resolve();
  }
}

export interface PartitionOptions {
  /** This process in the partition group (unique among the orchestrator's replicas). */
  replica: string;
  /** PARTITIONS_PREVIOUS: the count a running partition count change comes from. */
  previousPartitions?: number | undefined;
  logger: Logger;
  /**
   * The LLM planner is configured: a create without a plan is handed to the planner queue (same
   * reply-to, correlation and deadline) instead of being planned here, so this partition's
   * other messages never wait for a model.
   */
  planWithModel?: boolean | undefined;
}

async function handle(
  d: PartitionDelivery,
  mem: PartitionMemory,
  writer: TaskWriter,
  tools: ToolAdmin,
  options: PartitionOptions,
): Promise<void> {
  switch (d.type) {
    case 'task.create': {
      const cmd = d.data;
      const reply = (body: TaskReply) => d.reply(body);
      if (options.planWithModel && !cmd.plan) {
        // A redelivered create may have been inserted already: no second model call for it.
        if (d.redelivered && (await writer.answerExisting(mem, cmd, reply))) return;
        await d.forward('task.plan', cmd, d.envelope.correlation_id ? { correlationId: d.envelope.correlation_id } : {});
        return;
      }
      return writer.create(mem, cmd, reply, d.envelope.correlation_id);
    }
    case 'task.cancel':
      return writer.cancel(mem, d.data, (body) => d.reply(body));
    case 'step.result':
      return writer.stepResult(mem, d.data);
    case 'connection.changed':
      return writer.connectionChanged(mem, d.data);
    case 'task.reconcile':
      return writer.reconcile(mem, d.data.account_id, d.data.task_id, d.data.version);
    case 'tool.register': {
      const cmd = d.data;
      return mem.account(cmd.account_id, () => {
        // Forgotten before the write and its answer: the next create reads the tools again.
        mem.toolsChanged(cmd.account_id, cmd.environment);
        return tools.register(cmd, (body) => d.reply(body));
      });
    }
    case 'tool.list':
      return mem.account(d.data.account_id, () => tools.list(d.data, (body) => d.reply(body)));
    case 'task.inspect':
      return writer.inspect(mem, d.data, (body) => d.reply(body));
    case 'tool.delete': {
      const cmd = d.data;
      const deleted = await mem.account(cmd.account_id, () => {
        mem.toolsChanged(cmd.account_id, cmd.environment);
        return tools.delete(cmd, (body) => d.reply(body));
      });
      if (deleted) await writer.toolDeleted(mem, cmd.account_id, cmd.environment, cmd.name);
      return undefined;
    }
    default:
      return undefined;
  }
}
