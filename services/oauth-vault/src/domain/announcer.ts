import { newId, type ConnectionChanged } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { ConnectionStore } from './connection.js';
import type { OutboxDoc, OutboxStore } from './outbox.js';

/** Publishes one connection.changed event (with broker confirms); implemented over the broker. */
export interface EventSink {
  publish(event: OutboxDoc): Promise<void>;
}

/**
 * connection.changed through an outbox: `prepare` inserts the event before the change is
 * written, `send` publishes it right after, and `relay` (the sweep) publishes whatever a crash
 * or a broker outage left unsent, once the change it announces is visible.
 */
export class Announcer {
  constructor(
    private readonly outbox: OutboxStore,
    private readonly connections: ConnectionStore,
    private readonly sink: EventSink,
    private readonly logger: Logger,
    /** An event whose change has not landed after this long is abandoned (its writer died or lost). */
    private readonly abandonAfterMs: number,
  ) {}

  /** Inserts the event; `connectionId`: publish only once that connection's `last_event_id` names it. */
  async prepare(data: ConnectionChanged, connectionId: string | null): Promise<OutboxDoc> {
    const doc: OutboxDoc = { _id: newId('evt'), data, connection_id: connectionId, created_at: new Date(), sent_at: null, dropped: false };
    await this.outbox.insert(doc);
    return doc;
  }

  /** Publishes now; on failure the relay retries later (the event stays unsent). */
  async send(event: OutboxDoc): Promise<boolean> {
    try {
      await this.sink.publish(event);
      await this.outbox.markSent(event._id);
      return true;
    } catch (err) {
      this.logger.warn('connection.changed not published yet; the sweep retries', { event_id: event._id, error: String(err) });
      return false;
    }
  }

  /** Publishes the events left unsent for more than `minAgeMs`. */
  async relay(minAgeMs: number, limit = 100): Promise<number> {
    const now = Date.now();
    let sent = 0;
    for (const event of await this.outbox.unsent(new Date(now - minAgeMs), limit)) {
      if (event.connection_id) {
        const conn = await this.connections.find(event.connection_id);
        if (conn?.last_event_id !== event._id) {
          // Not (or no longer) the change the connection shows: still being written, superseded, or abandoned.
          if (now - event.created_at.getTime() > this.abandonAfterMs) await this.outbox.markDropped(event._id);
          continue;
        }
      }
      if (await this.send(event)) sent += 1;
    }
    return sent;
  }
}
