import { PARTITIONS, QUEUES } from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import { viewFromEvent, type TaskViewRepository } from '../store/task-view.repository.js';

/** Keeps the read model: one active consumer per partition, so one account's events apply in order. */
export async function consumeTaskEvents(broker: Broker, views: TaskViewRepository, prefetch = 64): Promise<void> {
  for (let p = 0; p < PARTITIONS; p++) {
    await broker.consume({ ...QUEUES.gatewayTaskEvents(p), singleActiveConsumer: true }, async (d) => views.apply(viewFromEvent(d.data)), {
      prefetch,
      serial: true,
    });
  }
}
