import { Schema, type Connection } from 'mongoose';
import { isDuplicateKey } from '@tes/store';
import type { StepClaim, StepClaimLatest, StepClaimStore } from '../domain/step-claim.js';

/**
 * Who runs a step right now. A claim is an insert of `<idempotency key>#<generation>`;
 * a claim whose lease ran out (its holder died) is taken over by inserting the next
 * generation, so two executors never run one step at the same time.
 *
 * Claims are never deleted (a release expires one), so generation 0 of a step can be inserted
 * once only: winning it proves the step was never claimed, hence never run nor running, and
 * the first dispatch of a step needs no read (`claimFirst`).
 */
interface StepClaimDoc {
  _id: string;
  key: string;
  gen: number;
  expires_at: Date;
}

const schema = new Schema<StepClaimDoc>({ _id: String, key: String, gen: Number, expires_at: Date }, { versionKey: false });
schema.index({ key: 1, gen: -1 });

export class StepClaimRepository implements StepClaimStore {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<StepClaimDoc>('StepClaim', schema, 'step_claims');
  }

  /** The newest claim of a step (a read that `acquire` needs; callers may make it alongside others). */
  async latest(key: string): Promise<StepClaimLatest | null> {
    return this.model.collection.findOne(
      { key },
      { sort: { gen: -1 }, projection: { gen: 1, expires_at: 1 } },
    ) as Promise<StepClaimLatest | null>;
  }

  /** Generation 0: the claim when the step was never claimed before, else undefined (then `latest` and `acquire`). */
  async claimFirst(key: string, leaseMs: number, now = Date.now()): Promise<StepClaim | undefined> {
    return this.insert(key, 0, now + leaseMs);
  }

  /**
   * The claim when this caller may run the step now; undefined while another holds a live one.
   * `latest` is what `latest(key)` answered, if the caller read it already.
   */
  async acquire(key: string, leaseMs: number, now = Date.now(), latest?: StepClaimLatest | null): Promise<StepClaim | undefined> {
    const newest = latest === undefined ? await this.latest(key) : latest;
    if (newest && newest.expires_at.getTime() > now) return undefined;
    return this.insert(key, newest ? newest.gen + 1 : 0, now + leaseMs);
  }

  /**
   * Gives a claim back when the step will run again later (waiting for consent, transient failure):
   * its lease ends now, so the next dispatch takes the next generation at once. Expired, not
   * deleted: a slow holder releasing generation 0 after a takeover must not free generation 0
   * for a duplicate delivery's `claimFirst` while the takeover's holder still runs the step.
   */
  async release(claim: StepClaim): Promise<void> {
    await this.model.collection.updateOne({ _id: claim.id } as never, { $set: { expires_at: new Date(0) } });
  }

  private async insert(key: string, gen: number, expiresAtMs: number): Promise<StepClaim | undefined> {
    const id = `${key}#${gen}`;
    try {
      await this.model.collection.insertOne({ _id: id, key, gen, expires_at: new Date(expiresAtMs) } as never);
      return { id };
    } catch (err) {
      if (isDuplicateKey(err)) return undefined;
      throw err;
    }
  }
}
