import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';
import type { ConnectionDoc, ConnectionStore, Mutation, MutationResult } from '../domain/connection.js';
import type { LeaseRepository } from './lease.repository.js';

const connectionSchema = new Schema<ConnectionDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    user_id: { type: String, required: true },
    service: { type: String, required: true },
    generation: { type: Number, required: true },
    status: { type: String, required: true },
    scopes: [String],
    access_token_enc: { type: String, default: null },
    refresh_token_enc: { type: String, default: null },
    key_id: { type: String, default: null },
    token_type: { type: String, default: null },
    expires_at: { type: Date, default: null },
    lifetime_s: { type: Number, default: null },
    created_at: Date,
    authorized_at: Date,
    refreshed_at: { type: Date, default: null },
    next_refresh_at: { type: Date, default: null },
    next_probe_at: { type: Date, default: null },
    last_probe_at: { type: Date, default: null },
    broken_at: { type: Date, default: null },
    broken_reason: { type: String, default: null },
    revoked_at: { type: Date, default: null },
    last_event_id: { type: String, default: null },
    updated_at: Date,
  },
  { versionKey: false },
);
connectionSchema.index({ account_id: 1, environment: 1, user_id: 1 });
connectionSchema.index({ next_refresh_at: 1 });
connectionSchema.index({ next_probe_at: 1 });
connectionSchema.index({ key_id: 1 });

export class LeaseLostError extends Error {
  constructor(id: string) {
    super(`the write lease of ${id} expired before the write`);
    this.name = 'LeaseLostError';
  }
}

export class ConnectionRepository implements ConnectionStore {
  readonly model;

  constructor(
    conn: Connection,
    private readonly leases: LeaseRepository,
    private readonly leaseWaitMs: number,
  ) {
    this.model = conn.model<ConnectionDoc>('Connection', connectionSchema, 'connections');
  }

  async find(id: string): Promise<ConnectionDoc | null> {
    return this.model.findById(id).lean<ConnectionDoc>().exec();
  }

  async listFor(accountId: string, environment: Environment, userId: string): Promise<ConnectionDoc[]> {
    return this.model.find({ account_id: accountId, environment, user_id: userId }).sort({ service: 1 }).lean<ConnectionDoc[]>().exec();
  }

  /**
   * Deletes every user's connection to a service of an account's environment (its provider is
   * gone). Not under the write lease: nothing of that service should be written any more.
   */
  async deleteForService(accountId: string, environment: Environment, service: string): Promise<number> {
    const res = await this.model.deleteMany({ account_id: accountId, environment, service }).exec();
    return res.deletedCount;
  }

  async dueForRefresh(now: Date, limit: number): Promise<ConnectionDoc[]> {
    return this.model
      .find({ status: 'connected', next_refresh_at: { $ne: null, $lte: now } })
      .sort({ next_refresh_at: 1 })
      .limit(limit)
      .lean<ConnectionDoc[]>()
      .exec();
  }

  async dueForProbe(now: Date, limit: number): Promise<ConnectionDoc[]> {
    return this.model
      .find({ status: 'connected', next_probe_at: { $ne: null, $lte: now } })
      .sort({ next_probe_at: 1 })
      .limit(limit)
      .lean<ConnectionDoc[]>()
      .exec();
  }

  /** Connections holding a token sealed with another key than `kid`. */
  async sealedWithOtherKey(kid: string, limit: number, afterId = ''): Promise<ConnectionDoc[]> {
    return this.model
      .find({ key_id: { $nin: [kid, null] }, _id: { $gt: afterId } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<ConnectionDoc[]>()
      .exec();
  }

  /**
   * The one way a connection changes. A new connection is an insert (the unique `_id` lets
   * one win); an existing one at generation g is written only by whoever claimed the lease on
   * g+1 (an insert into a unique index), after re-reading it. Losers wait and re-check
   * `needed` on the newer document: 20 concurrent refreshes of one token make one call to the
   * provider. A lease whose holder died expires after LEASE_TTL_MS and is taken over.
   */
  async mutate(id: string, kind: string, m: Mutation): Promise<MutationResult> {
    const deadline = Date.now() + this.leaseWaitMs;
    let pause = 10;
    for (;;) {
      const cur = await this.find(id);
      if (!m.needed(cur)) return { doc: cur, changed: false };
      if (!cur) {
        const next = await m.apply(null);
        if (!next) return { doc: null, changed: false };
        const doc: ConnectionDoc = { ...next, _id: id, generation: 1 };
        try {
          await this.model.collection.insertOne(doc as never);
          return { doc, changed: true };
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          continue;
        }
      }
      const lease = await this.leases.acquire(id, cur.generation + 1, kind);
      if (lease) {
        try {
          const fresh = await this.find(id);
          if (fresh && fresh.generation === cur.generation) {
            if (!m.needed(fresh)) return { doc: fresh, changed: false };
            const next = await m.apply(fresh);
            if (!next) return { doc: fresh, changed: false };
            if (!this.leases.isLive(lease)) throw new LeaseLostError(id);
            const doc: ConnectionDoc = { ...next, _id: id, generation: cur.generation + 1 };
            const res = await this.model.collection.replaceOne({ _id: id, generation: cur.generation } as never, doc);
            if (res.matchedCount === 1) return { doc, changed: true };
          }
        } finally {
          await this.leases.release(lease);
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`connection ${id} is busy: no write lease within ${this.leaseWaitMs} ms`);
      await sleep(pause + Math.random() * pause);
      pause = Math.min(pause * 2, 200);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
