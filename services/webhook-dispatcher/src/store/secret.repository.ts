import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import { KeyRing } from '@tes/sealing';
import { isDuplicateKey } from '@tes/store';
import type { SecretStore } from '../domain/ports.js';
import type { SecretDoc } from '../domain/secret.js';
import type { ChangeListener } from './endpoint.repository.js';

/** As stored: `sealed`, or `secret` in plaintext for a version from before sealing. */
type StoredSecret = Omit<SecretDoc, 'secret'> & { sealed?: string; secret?: string };

const secretSchema = new Schema<StoredSecret>(
  {
    _id: String,
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    version: { type: Number, required: true },
    sealed: String,
    /** Legacy plaintext, removed when the version is sealed. */
    secret: String,
    created_at: Date,
    previous_valid_until: Date,
  },
  { versionKey: false },
);
secretSchema.index({ account_id: 1, environment: 1, version: -1 });

/** The associated data of a sealed secret: a ciphertext copied to another version or account does not open. */
const place = (id: string) => `webhook_secret:${id}`;

export interface SealResult {
  /** Versions found in plaintext and sealed now. */
  sealed: number;
  /** Versions sealed under an older key and re-sealed with the current one. */
  resealed: number;
}

/**
 * Signing secrets, one document per version: a rotation inserts the next version (`_id` =
 * `${account_id}:${environment}:${version}`), so two concurrent rotations cannot both win and no
 * read-modify-write can lose one.
 *
 * The secret is stored sealed with the key ring (`sealed`, AES-256-GCM bound to the `_id`): what
 * this repository returns is opened, what it stores never is. A version written before sealing
 * keeps its plaintext in `secret` until it is read or swept (`sealPlaintext`), then is sealed in place.
 */
export class SecretRepository implements SecretStore {
  private readonly model;
  private readonly listeners: ChangeListener[] = [];

  constructor(
    conn: Connection,
    private readonly ring: KeyRing,
  ) {
    this.model = conn.model<StoredSecret>('WebhookSecret', secretSchema, 'webhook_secrets');
  }

  /** Told of every version this process inserts (the delivery cache drops its copy). */
  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  /** The newest versions first (two are enough to sign during a grace period), opened. */
  async latest(accountId: string, environment: Environment, limit = 2): Promise<SecretDoc[]> {
    const docs = await this.model
      .find({ account_id: accountId, environment })
      .sort({ version: -1 })
      .limit(limit)
      .lean<StoredSecret[]>()
      .exec();
    return Promise.all(docs.map((d) => this.open(d)));
  }

  /** Inserts one version, sealed; false when that version already exists. */
  async insert(doc: Omit<SecretDoc, '_id'>): Promise<boolean> {
    const { secret, ...rest } = doc;
    const _id = `${doc.account_id}:${doc.environment}:${doc.version}`;
    try {
      await this.model.collection.insertOne({ _id, ...rest, sealed: this.ring.encrypt(secret, place(_id)) } as never);
      for (const l of this.listeners) l(doc.account_id, doc.environment);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /**
   * Seals every version still in plaintext (at boot) and, with `rekey`, re-seals the versions
   * sealed under an older key with the current one (`secrets reseal`, after a key rotation).
   */
  async sealAll(rekey: boolean): Promise<SealResult> {
    const out: SealResult = { sealed: 0, resealed: 0 };
    const filter = rekey ? {} : { secret: { $exists: true } };
    for await (const doc of this.model.collection.find(filter as never) as AsyncIterable<StoredSecret>) {
      if (doc.sealed === undefined && doc.secret !== undefined) {
        if (await this.sealPlaintext(doc._id, doc.secret)) out.sealed++;
      } else if (rekey && doc.sealed !== undefined && KeyRing.kidOf(doc.sealed) !== this.ring.currentKid) {
        const sealed = this.ring.encrypt(this.ring.decrypt(doc.sealed, place(doc._id)), place(doc._id));
        // Conditional on the old ciphertext: a concurrent reseal of the same version changes nothing twice.
        const res = await this.model.collection.updateOne({ _id: doc._id, sealed: doc.sealed } as never, { $set: { sealed } });
        if (res.modifiedCount > 0) out.resealed++;
      }
    }
    return out;
  }

  private async open(doc: StoredSecret): Promise<SecretDoc> {
    const { sealed, secret, ...rest } = doc;
    if (sealed !== undefined) return { ...rest, secret: this.ring.decrypt(sealed, place(doc._id)) };
    if (secret === undefined) throw new Error(`webhook secret ${doc._id} has no value`);
    await this.sealPlaintext(doc._id, secret);
    return { ...rest, secret };
  }

  /**
   * Replaces a version's plaintext by its sealed form in one single-document update (no
   * transaction), conditional on the plaintext still being there: when competing replicas seal
   * the same version, the first wins and the others change nothing. True when this call sealed it.
   */
  private async sealPlaintext(id: string, secret: string): Promise<boolean> {
    const res = await this.model.collection.updateOne({ _id: id, secret } as never, {
      $set: { sealed: this.ring.encrypt(secret, place(id)) },
      $unset: { secret: '' },
    });
    return res.modifiedCount > 0;
  }
}
