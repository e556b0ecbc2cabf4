import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';
import type { SecretVersion } from '../domain/secret.js';
import type { ChangeListener } from './endpoint.repository.js';

/**
 * Signing secrets, one document per version and never updated: a rotation inserts the next
 * version (`_id` = `${account_id}:${environment}:${version}`), so two concurrent rotations
 * cannot both win and no read-modify-write can lose one.
 */
export interface SecretDoc extends SecretVersion {
  _id: string;
  account_id: string;
  environment: Environment;
}

const secretSchema = new Schema<SecretDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    version: { type: Number, required: true },
    secret: { type: String, required: true },
    created_at: Date,
    previous_valid_until: Date,
  },
  { versionKey: false },
);
secretSchema.index({ account_id: 1, environment: 1, version: -1 });

export class SecretRepository {
  private readonly model;
  private readonly listeners: ChangeListener[] = [];

  constructor(conn: Connection) {
    this.model = conn.model<SecretDoc>('WebhookSecret', secretSchema, 'webhook_secrets');
  }

  /** Told of every version this process inserts (the delivery cache drops its copy). */
  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /** The newest versions first (two are enough to sign during a grace period). */
  async latest(accountId: string, environment: Environment, limit = 2): Promise<SecretDoc[]> {
    return this.model.find({ account_id: accountId, environment }).sort({ version: -1 }).limit(limit).lean<SecretDoc[]>().exec();
  }

  /** Inserts one version; false when that version already exists. */
  async insert(doc: Omit<SecretDoc, '_id'>): Promise<boolean> {
    try {
      await this.model.collection.insertOne({ _id: `${doc.account_id}:${doc.environment}:${doc.version}`, ...doc } as never);
      for (const l of this.listeners) l(doc.account_id, doc.environment);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }
}
