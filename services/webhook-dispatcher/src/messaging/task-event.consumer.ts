import { QUEUES } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { PoisonMessageError, type Broker } from '@tes/messaging';
import type { CrashPoint } from '../crash-point.js';
import type { DeliveryScheduler } from '../scheduling/delivery-scheduler.js';
import { recordTaskEvents, type IncomingEvent, type RecordEventDeps, type RecordResult } from '../domain/record-event.use-case.js';
import { toWebhook, UnmappableEventError } from '../domain/webhook-event.js';
import { Batcher } from '../store/batch.js';

/** How long a store that fails (database unreachable) is retried before the broker's own retries. */
const STORE_RETRY_BUDGET_MS = 30_000;

export interface TaskEventConsumerDeps extends RecordEventDeps {
  scheduler: Pick<DeliveryScheduler, 'accept' | 'whenRoom'>;
  checkpoint?: ((point: CrashPoint) => void) | undefined;
}

/**
 * task.event → stored event (once per message id) → ack. The ack comes only after the store,
 * so a crash before it redelivers the message and the dedup keys absorb it. Messages are
 * stored in batches (all that arrived while the previous batch was written), one batch at a
 * time, in queue order, which is each task's version order; the stored events go straight to
 * this replica's scheduler. While the scheduler is full, the next batch waits (its messages
 * unacked), so a busy replica leaves the queue to the others.
 */
export async function consumeTaskEvents(broker: Broker, deps: TaskEventConsumerDeps, prefetch: number): Promise<void> {
  let seq = 0;
  const batcher = new Batcher<IncomingEvent, RecordResult>(
    async (items) => {
      await deps.scheduler.whenRoom();
      const tag = `${deps.holder}.${++seq}`;
      const { results, stored } = await storeWithRetry(() => recordTaskEvents(items, deps, tag), deps.logger);
      if (stored.some((s) => s.kind === 'pending')) deps.checkpoint?.('after_store');
      deps.scheduler.accept(stored);
      return results;
    },
    { maxBatch: prefetch, maxConcurrent: 1 },
  );
  await broker.consume(
    QUEUES.dispatcherTaskEvents,
    async (delivery) => {
      const message = delivery.data;
      const logger = deps.logger.child({ task_id: message.task.id, correlation_id: delivery.envelope.correlation_id });
      try {
        // Mapped before it joins a batch: a message that can never be mapped is poison at once.
        toWebhook(message, delivery.envelope.occurred_at);
      } catch (err) {
        if (err instanceof UnmappableEventError) throw new PoisonMessageError(err.message);
        throw err;
      }
      const result = await batcher.add({ message, envelope: delivery.envelope });
      logger.info('task event stored', { message_id: delivery.envelope.id, status: result.status, duplicate: !result.inserted });
    },
    { prefetch },
  );
}

/**
 * A database outage must not send task events to the dead-letter queue after the broker's
 * few quick retries: keep trying here for a while (the next batches wait, in order), then give
 * up to the broker.
 */
async function storeWithRetry<T>(store: () => Promise<T>, logger: Logger): Promise<T> {
  const deadline = Date.now() + STORE_RETRY_BUDGET_MS;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await store();
    } catch (err) {
      if (Date.now() + delay > deadline) throw err;
      logger.warn('storing task events failed, retrying', { error: String(err), retry_in_ms: delay });
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
