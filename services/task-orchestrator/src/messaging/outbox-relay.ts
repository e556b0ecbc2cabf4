import type { Broker } from '@tes/messaging';
import type { OutboxMessage, Task } from '../domain/task.js';

/**
 * Publishes a task's outbox with confirms, in order. Clearing it in the database is the
 * writer's business (folded into the task's next write, or cleared in a batch soon after).
 * A crash in between republishes on reconcile: consumers dedup by message id.
 */
export function outboxRelay(broker: Broker, onStatus?: (status: string) => void) {
  return async (doc: Task): Promise<void> => {
    // Published back to back on one channel (so in order), confirms awaited together.
    await Promise.all(
      doc.outbox.map((msg) =>
        broker.publish(msg.type, msg.data, {
          messageId: msg.id,
          ...(msg.partition_key !== undefined ? { partitionKey: msg.partition_key } : {}),
          ...(doc.correlation_id ? { correlationId: doc.correlation_id } : {}),
        }),
      ),
    );
    for (const msg of doc.outbox) if (isTaskEvent(msg)) onStatus?.(msg.data.task.status);
  };
}

/** An outbox message's data is that of its type (OutboxMessage<T> ties them). */
function isTaskEvent(msg: OutboxMessage): msg is OutboxMessage<'task.event'> {
  return msg.type === 'task.event';
}
