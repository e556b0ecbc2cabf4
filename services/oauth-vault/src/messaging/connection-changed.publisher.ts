import type { Broker } from '@tes/messaging';
import type { EventSink } from '../domain/announcer.js';
import type { OutboxDoc } from '../domain/outbox.js';

/**
 * connection.changed to the orchestrator partition of the account (it resumes or fails the
 * user's waiting tasks). The outbox id is the message id: a re-publish is recognisably the same.
 */
export function connectionChangedPublisher(broker: Broker): EventSink {
  return {
    async publish(event: OutboxDoc): Promise<void> {
      await broker.publish('connection.changed', event.data, {
        partitionKey: event.data.account_id,
        messageId: event._id,
        occurredAt: event.created_at.toISOString(),
      });
    },
  };
}
