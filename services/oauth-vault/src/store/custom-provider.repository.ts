import { Schema, type Connection } from 'mongoose';
import { customProviderIdOf, type CustomProviderDoc, type CustomProviderStore, type ProviderScope } from '../domain/custom-provider.js';

const customProviderSchema = new Schema<CustomProviderDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    service: { type: String, required: true },
    display_name: String,
    authorize_url: String,
    token_url: String,
    revocation_url: { type: String, default: null },
    scopes: [String],
    client_id: String,
    client_secret_enc: String,
    key_id: String,
    pkce: Boolean,
    token_auth: String,
    created_at: Date,
    updated_at: Date,
  },
  { versionKey: false },
);
customProviderSchema.index({ key_id: 1 });

export class CustomProviderRepository implements CustomProviderStore {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<CustomProviderDoc>('CustomProvider', customProviderSchema, 'custom_providers');
  }

  async find(scope: ProviderScope, service: string): Promise<CustomProviderDoc | null> {
    return this.model.findById(customProviderIdOf(scope, service)).lean<CustomProviderDoc>().exec();
  }

  /** Creates or replaces (the last registration wins). */
  async save(doc: CustomProviderDoc): Promise<void> {
    await this.model.collection.replaceOne({ _id: doc._id } as never, doc, { upsert: true });
  }

  /** Replaces the document only if its secret is still `sealed` (a re-registration in between wins). */
  async replaceIfUnchanged(doc: CustomProviderDoc, sealed: string): Promise<boolean> {
    const res = await this.model.collection.replaceOne({ _id: doc._id, client_secret_enc: sealed } as never, doc);
    return res.matchedCount === 1;
  }

  /** True when there was one. */
  async delete(scope: ProviderScope, service: string): Promise<boolean> {
    const res = await this.model.deleteOne({ _id: customProviderIdOf(scope, service) }).exec();
    return res.deletedCount > 0;
  }

  /** Providers whose secret is sealed with another key than `kid`. */
  async sealedWithOtherKey(kid: string, limit: number, afterId = ''): Promise<CustomProviderDoc[]> {
    return this.model
      .find({ key_id: { $ne: kid }, _id: { $gt: afterId } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<CustomProviderDoc[]>()
      .exec();
  }
}
