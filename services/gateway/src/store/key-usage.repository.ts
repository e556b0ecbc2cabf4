import { Schema, type Connection } from 'mongoose';
import { isDuplicateKey } from '@tes/store';

interface KeyUsageDoc {
  /** The key's id. */
  _id: string;
  last_used_at: Date;
}

const keyUsageSchema = new Schema<KeyUsageDoc>({ _id: String, last_used_at: Date }, { versionKey: false });

/**
 * `api_key_usage`: when each key last authenticated a request, one document per key. Kept apart
 * from `api_keys` on purpose: FerretDB v1 writes a whole document back without a lock, so a
 * last-used write on the key's own document could undo a revocation made at the same moment.
 * Only the gateways' LastUsedThrottle writes here, and only this one field.
 */
export class KeyUsageRepository {
  readonly usage;

  constructor(conn: Connection) {
    this.usage = conn.model<KeyUsageDoc>('ApiKeyUsage', keyUsageSchema, 'api_key_usage');
  }

  /**
   * Records `at` unless a time within `intervalMs` before it is stored: one conditional upsert.
   * When the stored time is recent the filter misses and the upsert's insert hits the existing
   * `_id` (duplicate key): another replica wrote it within the interval, nothing to do.
   */
  async touch(keyId: string, at: Date, intervalMs: number): Promise<void> {
    try {
      await this.usage.collection.updateOne(
        { _id: keyId, last_used_at: { $lt: new Date(at.getTime() - intervalMs) } } as never,
        { $set: { last_used_at: at } },
        { upsert: true },
      );
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  async lastUsedOf(keyIds: readonly string[]): Promise<Map<string, Date>> {
    if (keyIds.length === 0) return new Map();
    const docs = await this.usage
      .find({ _id: { $in: keyIds } })
      .lean<KeyUsageDoc[]>()
      .exec();
    return new Map(docs.map((d) => [d._id, new Date(d.last_used_at)]));
  }
}
