import { randomBytes } from 'node:crypto';
import { Schema, type Connection } from 'mongoose';
import { claim } from '@tes/store';
import type { LeaseStore } from '../domain/lease.js';

/**
 * Leases, single-use markers and sweep claims: all inserts into the unique `_id` index of
 * `claims`, so exactly one replica wins each, on MongoDB and FerretDB alike. Nothing here is
 * ever updated. Expired entries are deleted by the sweep (TTL is not enforced by FerretDB).
 */
export interface ClaimDoc {
  _id: string;
  kind: string;
  connection_id: string | null;
  generation: number | null;
  attempt: number | null;
  holder: string;
  created_at: Date;
  expires_at: Date;
}

const claimSchema = new Schema<ClaimDoc>(
  {
    _id: String,
    kind: String,
    connection_id: { type: String, default: null },
    generation: { type: Number, default: null },
    attempt: { type: Number, default: null },
    holder: String,
    created_at: Date,
    expires_at: Date,
  },
  { versionKey: false },
);
claimSchema.index({ connection_id: 1, generation: 1 });
claimSchema.index({ expires_at: 1 });

export interface Lease {
  id: string;
  connectionId: string;
  generation: number;
  expiresAt: number;
}

export const CLAIMS_COLLECTION = 'claims';

export class LeaseRepository implements LeaseStore {
  private readonly model;
  private readonly holder = `h_${randomBytes(6).toString('hex')}`;

  constructor(
    private readonly conn: Connection,
    private readonly ttlMs: number,
  ) {
    this.model = conn.model<ClaimDoc>('Claim', claimSchema, CLAIMS_COLLECTION);
  }

  /**
   * The right to write generation `generation` of a connection (its document is at
   * generation - 1). Attempt 0 is the normal claim; if its holder died (the lease expired with
   * the document unchanged), the next attempt takes over, again by an insert that one wins.
   */
  async acquire(connectionId: string, generation: number, kind: string): Promise<Lease | null> {
    const base = `lease:${connectionId}:g${generation}`;
    const first = await this.tryAttempt(base, connectionId, generation, 0, kind);
    if (first) return first;
    const latest = await this.model
      .find({ connection_id: connectionId, generation })
      .sort({ attempt: -1 })
      .limit(1)
      .lean<ClaimDoc[]>()
      .exec();
    const top = latest[0];
    if (!top) return this.tryAttempt(base, connectionId, generation, 0, kind);
    if (top.expires_at.getTime() > Date.now()) return null;
    return this.tryAttempt(base, connectionId, generation, (top.attempt ?? 0) + 1, kind);
  }

  /** Still safe to write: the lease has a margin left (a slow holder must not race a takeover). */
  isLive(lease: Lease): boolean {
    return Date.now() < lease.expiresAt - Math.min(5000, this.ttlMs / 5);
  }

  async release(lease: Lease): Promise<void> {
    await this.model.deleteOne({ _id: lease.id, holder: this.holder }).exec();
  }

  /** A single-use marker (an OAuth state, a sweep slot): true for the one caller that inserts it first. */
  async once(id: string, kind: string, expiresAt: Date): Promise<boolean> {
    return claim(this.conn, CLAIMS_COLLECTION, {
      _id: id,
      kind,
      connection_id: null,
      generation: null,
      attempt: null,
      holder: this.holder,
      created_at: new Date(),
      expires_at: expiresAt,
    });
  }

  async exists(id: string): Promise<boolean> {
    return (await this.model.countDocuments({ _id: id }).exec()) > 0;
  }

  /** Deletes entries that expired more than `graceMs` ago. */
  async purgeExpired(graceMs: number): Promise<number> {
    const res = await this.model.deleteMany({ expires_at: { $lt: new Date(Date.now() - graceMs) } }).exec();
    return res.deletedCount;
  }

  private async tryAttempt(base: string, connectionId: string, generation: number, attempt: number, kind: string): Promise<Lease | null> {
    const now = Date.now();
    const id = `${base}:a${attempt}`;
    const expiresAt = now + this.ttlMs;
    const won = await claim(this.conn, CLAIMS_COLLECTION, {
      _id: id,
      kind,
      connection_id: connectionId,
      generation,
      attempt,
      holder: this.holder,
      created_at: new Date(now),
      expires_at: new Date(expiresAt),
    });
    return won ? { id, connectionId, generation, expiresAt } : null;
  }
}
