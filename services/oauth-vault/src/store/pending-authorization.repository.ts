import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import type { ConnectionKey } from '../domain/connection.js';
import type { AuthAttemptDoc, PendingAuthorizationDoc, PendingAuthorizationStore } from '../domain/pending-authorization.js';

const pendingSchema = new Schema<PendingAuthorizationDoc>(
  {
    _id: String,
    account_id: String,
    environment: String,
    user_id: String,
    service: String,
    scopes: [String],
    task_id: String,
    created_at: Date,
    expires_at: Date,
  },
  { versionKey: false },
);
pendingSchema.index({ account_id: 1, environment: 1, user_id: 1, service: 1, expires_at: -1 });
pendingSchema.index({ expires_at: 1 });

const attemptSchema = new Schema<AuthAttemptDoc>(
  {
    _id: String,
    pending_id: String,
    code_verifier_enc: { type: String, default: null },
    created_at: Date,
    expires_at: Date,
  },
  { versionKey: false },
);
attemptSchema.index({ expires_at: 1 });

export class PendingAuthorizationRepository implements PendingAuthorizationStore {
  private readonly pending;
  private readonly attempts;

  constructor(conn: Connection) {
    this.pending = conn.model<PendingAuthorizationDoc>('PendingAuthorization', pendingSchema, 'pending_authorizations');
    this.attempts = conn.model<AuthAttemptDoc>('AuthAttempt', attemptSchema, 'auth_attempts');
  }

  async create(doc: PendingAuthorizationDoc): Promise<void> {
    await this.pending.collection.insertOne(doc as never);
  }

  async find(id: string): Promise<PendingAuthorizationDoc | null> {
    return this.pending.findById(id).lean<PendingAuthorizationDoc>().exec();
  }

  /** A used link is gone (the sandbox consent page makes links single-use). */
  async delete(id: string): Promise<void> {
    await this.pending.deleteOne({ _id: id }).exec();
  }

  /** A still-valid pending authorization for exactly these scopes (so a user sees one link, not one per task). */
  async findReusable(key: ConnectionKey, scopes: string[], validAfter: Date): Promise<PendingAuthorizationDoc | null> {
    const docs = await this.pending
      .find({
        account_id: key.account_id,
        environment: key.environment,
        user_id: key.user_id,
        service: key.service,
        expires_at: { $gt: validAfter },
      })
      .sort({ expires_at: -1 })
      .limit(20)
      .lean<PendingAuthorizationDoc[]>()
      .exec();
    const want = scopes.join(' ');
    return docs.find((d) => [...d.scopes].sort().join(' ') === want) ?? null;
  }

  /** Deletes the pending authorizations (and their consent attempts) of a service of an account's environment. */
  async deleteForService(accountId: string, environment: Environment, service: string): Promise<number> {
    const filter = { account_id: accountId, environment, service };
    const ids = (await this.pending.find(filter, { _id: 1 }).lean<{ _id: string }[]>().exec()).map((d) => d._id);
    if (ids.length === 0) return 0;
    await this.attempts.deleteMany({ pending_id: { $in: ids } }).exec();
    const res = await this.pending.deleteMany(filter).exec();
    return res.deletedCount;
  }

  async createAttempt(doc: AuthAttemptDoc): Promise<void> {
    await this.attempts.collection.insertOne(doc as never);
  }

  async findAttempt(id: string): Promise<AuthAttemptDoc | null> {
    return this.attempts.findById(id).lean<AuthAttemptDoc>().exec();
  }

  /** Removes expired pending authorizations and attempts (TTL in code: FerretDB does not enforce it). */
  async purgeExpired(now: Date): Promise<void> {
    await this.pending.deleteMany({ expires_at: { $lt: now } }).exec();
    await this.attempts.deleteMany({ expires_at: { $lt: now } }).exec();
  }
}
