/** The RabbitMQ queue types a deployment may choose for its durable queues (AMQP_QUEUE_TYPE). */
export const QUEUE_TYPES = ['classic', 'quorum'] as const;
export type QueueType = (typeof QUEUE_TYPES)[number];

/** The declare arguments of a durable queue of this type (none for classic: queues declared before the setting existed stay equivalent). */
export function queueTypeArguments(type: QueueType = 'classic'): Record<string, string> {
  return type === 'quorum' ? { 'x-queue-type': 'quorum' } : {};
}
