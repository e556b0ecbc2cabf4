import { QUEUES } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { PartitionGroup, type Broker } from '@tes/messaging';
import { viewFromEvent, type TaskViewRepository } from '../store/task-view.repository.js';

/**
 * Keeps the read model: one active consumer per partition, so one account's events apply in
 * order, and the partitions spread over the gateway's replicas (PartitionGroup).
 */
export function consumeTaskEvents(
  broker: Broker,
  views: TaskViewRepository,
  options: { replica: string; logger: Logger; previousPartitions?: number | undefined; prefetch?: number },
): Promise<PartitionGroup> {
  return PartitionGroup.start({
    broker,
    group: 'gateway.task-events',
    replica: options.replica,
    logger: options.logger,
    previousPartitions: options.previousPartitions,
    queue: QUEUES.gatewayTaskEvents,
    consume: { prefetch: options.prefetch ?? 64, serial: true },
    handler: () => async (d) => views.apply(viewFromEvent(d.data)),
  });
}
