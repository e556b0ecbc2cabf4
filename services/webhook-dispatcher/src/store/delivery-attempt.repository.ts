import { Schema, type Connection } from 'mongoose';
import { isDuplicateKey } from '@tes/store';
import type { DeliveryAttemptDoc } from '../domain/attempt.js';
import type { AttemptStore, InsertOutcome } from '../domain/ports.js';
import { insertBatcher, type Batcher } from './batch.js';

const attemptSchema = new Schema<DeliveryAttemptDoc>(
  {
    _id: String,
    event_id: { type: String, required: true },
    task_id: String,
    account_id: String,
    environment: String,
    attempt: Number,
    url: String,
    started_at: Date,
    finished_at: Date,
    ok: Boolean,
    status_code: Number,
    latency_ms: Number,
    error: String,
  },
  { versionKey: false },
);
attemptSchema.index({ event_id: 1, attempt: 1 });

/** The `delivery_attempts` collection: the outcome of each attempt, recorded once (see DeliveryAttemptDoc). */
export class DeliveryAttemptRepository implements AttemptStore {
  private readonly model;
  private readonly batch: Batcher<DeliveryAttemptDoc, InsertOutcome>;

  constructor(conn: Connection) {
    this.model = conn.model<DeliveryAttemptDoc>('DeliveryAttempt', attemptSchema, 'delivery_attempts');
    this.batch = insertBatcher<DeliveryAttemptDoc>(() => this.model.collection);
  }

  /** As `record`, batched with the other outcomes being recorded now. */
  async recordBatched(doc: DeliveryAttemptDoc): Promise<boolean> {
    return (await this.batch.add(doc)) === 'inserted';
  }

  /** Records an outcome; false when this attempt's outcome was recorded already (by another holder). */
  async record(doc: DeliveryAttemptDoc): Promise<boolean> {
    try {
      await this.model.collection.insertOne(doc as never);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async get(eventId: string, attempt: number): Promise<DeliveryAttemptDoc | null> {
    return this.model.findById(`${eventId}:${attempt}`).lean<DeliveryAttemptDoc>().exec();
  }

  /**
   * The attempts of these events, by event then attempt. One equality query per event: FerretDB v1
   * pushes an equality down to PostgreSQL, but answers `$in` by reading the whole collection.
   */
  async listFor(eventIds: readonly string[]): Promise<DeliveryAttemptDoc[]> {
    const out: DeliveryAttemptDoc[] = [];
    const ids = [...new Set(eventIds)].sort();
    for (let i = 0; i < ids.length; i += 8) {
      const chunk = await Promise.all(
        ids.slice(i, i + 8).map((id) => this.model.find({ event_id: id }).sort({ attempt: 1 }).lean<DeliveryAttemptDoc[]>().exec()),
      );
      for (const list of chunk) out.push(...list);
    }
    return out;
  }
}
