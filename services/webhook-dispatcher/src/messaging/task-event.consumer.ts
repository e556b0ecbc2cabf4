import { QUEUES, type TaskEvent } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { PoisonMessageError, type Broker } from '@tes/messaging';
import { recordTaskEvent, type RecordEventDeps, type RecordResult } from '../domain/record-event.use-case.js';
import { UnmappableEventError } from '../domain/webhook-event.js';

/** How long a store that fails (database unreachable) is retried before the broker's own retries. */
const STORE_RETRY_BUDGET_MS = 30_000;

/**
 * task.event → stored event (once per message id) → ack. The ack comes only after the insert,
 * so a crash before it redelivers the message and the insert dedups it. Messages are stored
 * one at a time per replica, in queue order, which is each task's version order.
 * `onStored` wakes the poller, so the first attempt starts at once.
 */
export async function consumeTaskEvents(broker: Broker, deps: RecordEventDeps & { onStored(): void }, prefetch: number): Promise<void> {
  await broker.consume(
    QUEUES.dispatcherTaskEvents,
    async (delivery) => {
      const logger = deps.logger.child({ task_id: (delivery.data as TaskEvent).task.id, correlation_id: delivery.envelope.correlation_id });
      const result = await storeWithRetry(
        () => recordTaskEvent(delivery.data as TaskEvent, delivery.envelope, { ...deps, logger }),
        logger,
        delivery.envelope.id,
      );
      logger.info('task event stored', { message_id: delivery.envelope.id, status: result.status });
      if (result.status === 'pending') deps.onStored();
    },
    { prefetch, serial: true },
  );
}

/**
 * A database outage must not send task events to the dead-letter queue after the broker's
 * few quick retries: keep trying here for a while (the queue waits, in order), then give up
 * to the broker. A message that can never be mapped is poison at once.
 */
async function storeWithRetry(store: () => Promise<RecordResult>, logger: Logger, messageId: string): Promise<RecordResult> {
  const deadline = Date.now() + STORE_RETRY_BUDGET_MS;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await store();
    } catch (err) {
      if (err instanceof UnmappableEventError) throw new PoisonMessageError(err.message);
      if (Date.now() + delay > deadline) throw err;
      logger.warn('storing a task event failed, retrying', { message_id: messageId, error: String(err), retry_in_ms: delay });
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
