import { Schema, type Connection } from 'mongoose';
import type { SessionStore } from '../ports.js';

/**
 * Dashboard sessions, server-side. The cookie's JWT names a session (`sid`); a session is valid
 * while its document exists and has not expired, so signing out (delete) refuses the old cookie
 * at once, on every replica. A session is an insert with a random `_id` (never read-then-write).
 */
export interface DashboardSessionDoc {
  /** The JWT's `sid` (random, 144 bits). */
  _id: string;
  owner_id: string;
  account_id: string;
  created_at: Date;
  expires_at: Date;
}

const schema = new Schema<DashboardSessionDoc>(
  { _id: String, owner_id: String, account_id: String, created_at: Date, expires_at: Date },
  { versionKey: false },
);
schema.index({ owner_id: 1 });
schema.index({ expires_at: 1 });

export class DashboardSessionRepository implements SessionStore {
  readonly sessions;
  private lastSweep = 0;

  constructor(conn: Connection) {
    this.sessions = conn.model<DashboardSessionDoc>('DashboardSession', schema, 'dashboard_sessions');
  }

  async create(sid: string, ownerId: string, accountId: string, ttlS: number, now = new Date()): Promise<void> {
    const doc: DashboardSessionDoc = {
      _id: sid,
      owner_id: ownerId,
      account_id: accountId,
      created_at: now,
      expires_at: new Date(now.getTime() + ttlS * 1000),
    };
    await this.sessions.collection.insertOne(doc as never);
    // No TTL index on FerretDB v1: expired sessions are deleted in code, at most once a minute per process.
    if (now.getTime() - this.lastSweep > 60_000) {
      this.lastSweep = now.getTime();
      await this.sessions.collection.deleteMany({ expires_at: { $lt: now } });
    }
  }

  /** Whether the session exists, belongs to this owner and has not expired. */
  async isActive(sid: string, ownerId: string, now = new Date()): Promise<boolean> {
    const s = await this.sessions.collection.findOne({ _id: sid } as never, { projection: { owner_id: 1, expires_at: 1 } });
    return s !== null && s['owner_id'] === ownerId && new Date(s['expires_at'] as Date).getTime() > now.getTime();
  }

  /** Sign-out: the session's cookie is refused from now on. */
  async revoke(sid: string): Promise<void> {
    await this.sessions.collection.deleteOne({ _id: sid } as never);
  }
}
