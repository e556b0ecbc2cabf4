import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';

/** The outcome of one attempt, recorded once: `_id` = `${event_id}:${attempt}`. */
export interface DeliveryAttemptDoc {
  _id: string;
  event_id: string;
  task_id: string;
  account_id: string;
  environment: Environment;
  attempt: number;
  url: string;
  started_at: Date;
  finished_at: Date;
  ok: boolean;
  /** HTTP status, or null when no answer came (timeout, refused, closed, refused by the guard). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

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

export class DeliveryAttemptRepository {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<DeliveryAttemptDoc>('DeliveryAttempt', attemptSchema, 'delivery_attempts');
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

  async listFor(eventIds: readonly string[]): Promise<DeliveryAttemptDoc[]> {
    if (eventIds.length === 0) return [];
    return this.model
      .find({ event_id: { $in: [...eventIds] } })
      .sort({ event_id: 1, attempt: 1 })
      .lean<DeliveryAttemptDoc[]>()
      .exec();
  }
}
