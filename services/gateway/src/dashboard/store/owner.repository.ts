import { Schema, type Connection } from 'mongoose';
import { newId } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';
import { DELAY_SATURATES_AT, FAILURE_WINDOW_MS, MAX_ADDRESS_FAILURES, MAX_FAILURES, type RecentFailures } from '../lockout.js';
import { normalizeEmail, type Owner } from '../owner.js';
import type { OwnerStore } from '../ports.js';

/** One failed sign-in: an insert, counted per email and client address over the lock-out window. */
export interface SignInFailureDoc {
  _id: string;
  email: string;
  /** The client address as counted (addressKey: IPv4, or an IPv6 /64). */
  address: string;
  at: Date;
}

const ownerSchema = new Schema<Owner>(
  { _id: String, account_id: String, email: String, password_hash: String, created_at: Date },
  { versionKey: false },
);
ownerSchema.index({ email: 1 }, { unique: true });
ownerSchema.index({ account_id: 1 });

const failureSchema = new Schema<SignInFailureDoc>({ _id: String, email: String, address: String, at: Date }, { versionKey: false });
failureSchema.index({ email: 1, at: -1 });
failureSchema.index({ email: 1, address: 1, at: -1 });
failureSchema.index({ address: 1, at: -1 });
failureSchema.index({ at: 1 });

export class EmailTakenError extends Error {
  constructor(email: string) {
    super(`an owner with email ${email} exists already`);
    this.name = 'EmailTakenError';
  }
}

export class OwnerRepository implements OwnerStore {
  readonly owners;
  readonly failures;
  private lastSweep = 0;

  constructor(conn: Connection) {
    this.owners = conn.model<Owner>('Owner', ownerSchema, 'owners');
    this.failures = conn.model<SignInFailureDoc>('SignInFailure', failureSchema, 'signin_failures');
  }

  /** Inserts an owner; the unique email index decides between two concurrent creations. */
  async create(accountId: string, email: string, passwordHash: string, now = new Date()): Promise<Owner> {
    const doc: Owner = {
      _id: newId('own'),
      account_id: accountId,
      email: normalizeEmail(email),
      password_hash: passwordHash,
      created_at: now,
    };
    try {
      await this.owners.collection.insertOne(doc as never);
    } catch (err) {
      if (isDuplicateKey(err)) throw new EmailTakenError(doc.email);
      throw err;
    }
    return doc;
  }

  async byEmail(email: string): Promise<Owner | null> {
    return this.owners
      .findOne({ email: normalizeEmail(email) })
      .lean<Owner>()
      .exec();
  }

  async byId(id: string): Promise<Owner | null> {
    return this.owners.findById(id).lean<Owner>().exec();
  }

  /** The failures within the window that decide an attempt of `email` from `address` (see lockout.ts). */
  async recentFailures(email: string, address: string, now = new Date()): Promise<RecentFailures> {
    const since = { $gt: new Date(now.getTime() - FAILURE_WINDOW_MS) };
    const e = normalizeEmail(email);
    const times = async (filter: object, limit: number): Promise<Date[]> => {
      const rows = await this.failures.find(filter, { at: 1 }).sort({ at: -1 }).limit(limit).lean<SignInFailureDoc[]>().exec();
      return rows.map((r) => new Date(r.at));
    };
    const [pair, byAddress, byEmail] = await Promise.all([
      times({ email: e, address, at: since }, MAX_FAILURES),
      times({ address, at: since }, MAX_ADDRESS_FAILURES),
      times({ email: e, at: since }, DELAY_SATURATES_AT),
    ]);
    return { pair, address: byAddress, emailCount: byEmail.length };
  }

  async recordFailure(email: string, address: string, now = new Date()): Promise<void> {
    await this.failures.collection.insertOne({ _id: newId('sif'), email: normalizeEmail(email), address, at: now } as never);
    // No TTL index on FerretDB v1: old failures are deleted in code, at most once a minute per process.
    if (now.getTime() - this.lastSweep > 60_000) {
      this.lastSweep = now.getTime();
      await this.failures.collection.deleteMany({ at: { $lt: new Date(now.getTime() - 4 * FAILURE_WINDOW_MS) } });
    }
  }

  /**
   * A successful sign-in forgets the email's failures from that address only: an owner who signs
   * in does not lift the lock an attacker's address earned for the same email.
   */
  async clearFailures(email: string, address: string): Promise<void> {
    await this.failures.collection.deleteMany({ email: normalizeEmail(email), address });
  }
}
