import { randomUUID } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import { claim } from '@tes/store';
import type { IdempotencyState } from '../domain/idempotency.js';

/**
 * One record per (account, environment, Idempotency-Key). The request whose insert
 * wins is the only writer of the answer; every other request only reads.
 */
export interface IdempotencyDoc {
  _id: string;
  /** Random per insert: an expired record is deleted only if it is still that same insert. */
  claim: string;
  account_id: string;
  environment: Environment;
  body_hash: string;
  /** Chosen before the first attempt and reused by every retry: the orchestrator creates a task id once. */
  task_id: string;
  state: IdempotencyState;
  locked_at: Date;
  created_at: Date;
  expires_at: Date;
  response?: { status: number; body: unknown };
}

const schema = new Schema<IdempotencyDoc>({ _id: String }, { versionKey: false, strict: false });
schema.index({ expires_at: 1 });

const COLLECTION = 'idempotency_keys';

export class IdempotencyRepository {
  private readonly model;

  constructor(private readonly conn: Connection) {
    this.model = conn.model<IdempotencyDoc>('IdempotencyKey', schema, COLLECTION);
  }

  /** Inserts a fresh in-progress record; true when this request won the key. */
  async claim(doc: Omit<IdempotencyDoc, 'claim' | 'state' | 'locked_at'>, now: Date): Promise<IdempotencyDoc | null> {
    const full: IdempotencyDoc = { ...doc, claim: randomUUID(), state: 'in_progress', locked_at: now };
    return (await claim(this.conn, COLLECTION, full as unknown as { _id: string })) ? full : null;
  }

  async get(id: string): Promise<IdempotencyDoc | null> {
    return this.model.collection.findOne({ _id: id } as never) as Promise<IdempotencyDoc | null>;
  }

  /** The holder stores the answer to replay. */
  async complete(doc: IdempotencyDoc, response: { status: number; body: unknown }): Promise<void> {
    await this.model.collection.updateOne({ _id: doc._id, claim: doc.claim } as never, { $set: { state: 'complete', response } });
  }

  /** The holder gives the key back after a transient failure; a retry reuses the task id. */
  async release(doc: IdempotencyDoc): Promise<void> {
    await this.model.collection.updateOne({ _id: doc._id, claim: doc.claim } as never, { $set: { state: 'retryable' } });
  }

  /** A retry takes over a released or abandoned record (same task id, so a race here creates nothing twice). */
  async takeOver(doc: IdempotencyDoc, now: Date): Promise<void> {
    await this.model.collection.updateOne({ _id: doc._id, claim: doc.claim, state: { $ne: 'complete' } } as never, {
      $set: { state: 'in_progress', locked_at: now },
    });
  }

  /** Removes one expired record, only if it is still the insert that was judged expired. */
  async deleteExpired(doc: IdempotencyDoc): Promise<void> {
    await this.model.collection.deleteOne({ _id: doc._id, claim: doc.claim } as never);
  }

  /** Housekeeping: expired records are dead anyway (no TTL index on FerretDB). */
  async sweep(now: Date): Promise<number> {
    const res = await this.model.collection.deleteMany({ expires_at: { $lt: now } });
    return res.deletedCount;
  }
}
