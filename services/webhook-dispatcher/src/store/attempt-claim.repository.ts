import { Schema, type Connection } from 'mongoose';
import { claim } from '@tes/store';
import type { ClaimResult } from '../domain/attempt.js';
import type { ClaimStore, InsertOutcome } from '../domain/ports.js';
import { insertBatcher, type Batcher } from './batch.js';

/**
 * Who performs attempt n of an event: the replica whose insert of `${event_id}:${n}` wins.
 * A claim whose holder died before recording the outcome is taken over, once it is older than
 * the lease, by inserting `${event_id}:${n}:retry-${k}` (k = 1, 2, ...): again one insert wins.
 * Claims are never updated or deleted while their event can still be attempted.
 */
export interface AttemptClaimDoc {
  _id: string;
  event_id: string;
  attempt: number;
  holder: string;
  claimed_at: Date;
}

const claimSchema = new Schema<AttemptClaimDoc>(
  {
    _id: String,
    event_id: { type: String, required: true },
    attempt: { type: Number, required: true },
    holder: String,
    claimed_at: Date,
  },
  { versionKey: false },
);
claimSchema.index({ event_id: 1, attempt: 1, claimed_at: -1 });

/** The `attempt_claims` collection: who performs attempt n of an event (see AttemptClaimDoc). */
export class AttemptClaimRepository implements ClaimStore {
  private readonly model;
  private readonly batch: Batcher<AttemptClaimDoc, InsertOutcome>;

  constructor(private readonly conn: Connection) {
    this.model = conn.model<AttemptClaimDoc>('AttemptClaim', claimSchema, 'attempt_claims');
    this.batch = insertBatcher<AttemptClaimDoc>(() => this.model.collection);
  }

  /**
   * Claims attempt n. The plain claim `${event_id}:${n}` is an insert batched with the others
   * made now. When it is lost, the holder is normally alive and busy: the claim counts as held for
   * a lease from now, without a read. Only when the caller suspects the holder died (`suspect`:
   * the event is overdue) are the claims read, and an expired one taken over.
   */
  async acquire(
    eventId: string,
    attempt: number,
    holder: string,
    leaseMs: number,
    options: { suspect?: boolean; isGone?: (holder: string) => boolean; now?: Date } = {},
  ): Promise<ClaimResult> {
    const now = options.now ?? new Date();
    const base = `${eventId}:${attempt}`;
    if ((await this.batch.add({ _id: base, event_id: eventId, attempt, holder, claimed_at: now })) === 'inserted') {
      return { won: true, id: base, takeover: false };
    }
    if (!options.suspect) return { won: false, heldUntil: new Date(now.getTime() + leaseMs) };
    return this.takeOver(eventId, attempt, holder, leaseMs, now, options.isGone ?? (() => false));
  }

  /**
   * The latest claim of attempt n is older than the lease, or its holder is gone (its heartbeat
   * stopped: HolderLiveness): insert the next `retry-k` (one insert wins).
   */
  private async takeOver(
    eventId: string,
    attempt: number,
    holder: string,
    leaseMs: number,
    now: Date,
    isGone: (holder: string) => boolean,
  ): Promise<ClaimResult> {
    const base = `${eventId}:${attempt}`;
    const doc = (id: string): AttemptClaimDoc => ({ _id: id, event_id: eventId, attempt, holder, claimed_at: now });

    const claims = await this.model.find({ event_id: eventId, attempt }).sort({ claimed_at: -1 }).lean<AttemptClaimDoc[]>().exec();
    const latest = claims[0];
    if (!latest) return { won: false, heldUntil: null };
    const expiresAt = new Date(latest.claimed_at.getTime() + leaseMs);
    if (expiresAt.getTime() > now.getTime() && !isGone(latest.holder)) return { won: false, heldUntil: expiresAt };
    const id = `${base}:retry-${claims.length}`;
    if (await claim(this.conn, 'attempt_claims', doc(id) as never)) return { won: true, id, takeover: true };
    return { won: false, heldUntil: new Date(now.getTime() + leaseMs) };
  }

  /** The events of the claims `holder` made since `since` (a holder found gone: what it may have had in flight). */
  async recentOf(holder: string, since: Date): Promise<string[]> {
    const claims = await this.model
      .find({ holder, claimed_at: { $gt: since } }, { event_id: 1 })
      .lean<Pick<AttemptClaimDoc, 'event_id'>[]>()
      .exec();
    return [...new Set(claims.map((c) => c.event_id))];
  }

  async listFor(eventId: string): Promise<AttemptClaimDoc[]> {
    return this.model.find({ event_id: eventId }).sort({ claimed_at: 1 }).lean<AttemptClaimDoc[]>().exec();
  }
}
