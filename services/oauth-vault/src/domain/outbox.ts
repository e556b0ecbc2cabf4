import type { ConnectionChanged } from '@tes/contracts';

/**
 * connection.changed events waiting to be published. The event is inserted before the change
 * it announces; the relay publishes it (with confirms) once that change is visible
 * (`requires_connection_event`: the connection's `last_event_id` names it), then marks it sent.
 * A crash anywhere between leaves an unsent event the sweep publishes: nothing diverges.
 */
export interface OutboxDoc {
  _id: string;
  data: ConnectionChanged;
  /** Publish only once the connection document carries this event id; null: no condition. */
  connection_id: string | null;
  created_at: Date;
  sent_at: Date | null;
  /** Superseded or abandoned: never to be sent. */
  dropped: boolean;
}

/** The connection.changed outbox (store/outbox.repository.ts). */
export interface OutboxStore {
  insert(doc: OutboxDoc): Promise<void>;
  unsent(createdBefore: Date, limit: number): Promise<OutboxDoc[]>;
  markSent(id: string): Promise<void>;
  markDropped(id: string): Promise<void>;
}
