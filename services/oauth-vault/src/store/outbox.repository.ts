import { Schema, type Connection } from 'mongoose';
import type { OutboxDoc, OutboxStore } from '../domain/outbox.js';

const outboxSchema = new Schema<OutboxDoc>(
  {
    _id: String,
    data: Schema.Types.Mixed,
    connection_id: { type: String, default: null },
    created_at: Date,
    sent_at: { type: Date, default: null },
    dropped: { type: Boolean, default: false },
  },
  { versionKey: false },
);
outboxSchema.index({ sent_at: 1, created_at: 1 });

export class OutboxRepository implements OutboxStore {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<OutboxDoc>('Outbox', outboxSchema, 'outbox');
  }

  async insert(doc: OutboxDoc): Promise<void> {
    await this.model.collection.insertOne(doc as never);
  }

  async unsent(createdBefore: Date, limit: number): Promise<OutboxDoc[]> {
    return this.model
      .find({ sent_at: null, dropped: false, created_at: { $lte: createdBefore } })
      .sort({ created_at: 1 })
      .limit(limit)
      .lean<OutboxDoc[]>()
      .exec();
  }

  /** Two replicas may both mark one event: either write says the same thing. */
  async markSent(id: string): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: { sent_at: new Date() } }).exec();
  }

  async markDropped(id: string): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: { dropped: true } }).exec();
  }

  async purgeSent(before: Date): Promise<void> {
    await this.model.deleteMany({ $or: [{ sent_at: { $lt: before } }, { dropped: true, created_at: { $lt: before } }] }).exec();
  }
}
