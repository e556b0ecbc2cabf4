import { Schema, type Connection } from 'mongoose';
import type { EventKeyStore, InsertOutcome } from '../domain/ports.js';
import { insertEach } from './batch.js';

/**
 * One document per webhook event ever stored, `_id` = the event id: the dedup key of task event
 * messages. `pending_events` forgets an event once it is delivered and `events` holds it only from
 * then on, so without this key a message redelivered (or republished) later would be stored, and
 * sent, again. Insert-only.
 */
export interface EventKeyDoc {
  _id: string;
  at: Date;
}

const keySchema = new Schema<EventKeyDoc>({ _id: String, at: Date }, { versionKey: false });

/** The `event_keys` collection (see EventKeyDoc). */
export class EventKeyRepository implements EventKeyStore {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<EventKeyDoc>('EventKey', keySchema, 'event_keys');
  }

  /** Inserts the keys; `duplicate` for an event stored before. */
  insertMany(ids: readonly string[], at = new Date()): Promise<(InsertOutcome | Error)[]> {
    return insertEach(
      this.model.collection,
      ids.map((_id) => ({ _id, at })),
    );
  }
}
