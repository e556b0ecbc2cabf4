import { Schema, type Connection } from 'mongoose';
import type { Account, AccountStore, ApiKey } from '../domain/account.js';
import type { Credentials, CredentialsSource } from '../domain/credentials-cache.js';
import { KeyUsageRepository } from './key-usage.repository.js';

/** The stored documents are the domain's types as they are. */
export type AccountDoc = Account;
export type ApiKeyDoc = ApiKey;

const accountSchema = new Schema<AccountDoc>(
  { _id: String, name: String, plan: String, status: String, limits: Schema.Types.Mixed, created_at: Date },
  { versionKey: false },
);
const apiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: String,
    account_id: String,
    environment: String,
    hash: String,
    prefix: String,
    last4: String,
    name: String,
    status: String,
    created_at: Date,
    revoked_at: Date,
    expires_at: Date,
  },
  { versionKey: false },
);
apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ account_id: 1 });

/** Key hashes whose account this process has seen: a key never changes account. Bounded. */
const ACCOUNT_OF_KEY_MAX = 5000;

/**
 * Told of every change of an account or of one of its keys stored through this repository, after
 * the write; the change is answered once every listener has settled (the gateways have been told).
 */
export type CredentialsListener = (accountId: string) => Promise<void>;

/**
 * Accounts and API keys. Every change that can refuse or limit a request (a key revoked, an
 * account disabled, enabled or given new limits) goes through `revokeKey`, `setStatus` or
 * `setLimits`, which tell the `onChange` listeners: the gateways' credential caches are cleared
 * through them (CredentialsCache). A new key needs no announcement: unknown keys are never cached.
 * A key rolled with a delay (`expireKey`) is announced too. When keys were last used lives in its
 * own collection (`usage`), so the request path never writes a key document.
 */
export class AccountRepository implements AccountStore, CredentialsSource {
  readonly accounts;
  readonly keys;
  readonly usage: KeyUsageRepository;
  private readonly accountOfKey = new Map<string, string>();
  private readonly listeners: CredentialsListener[] = [];

  constructor(conn: Connection) {
    this.accounts = conn.model<AccountDoc>('Account', accountSchema, 'accounts');
    this.keys = conn.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys');
    this.usage = new KeyUsageRepository(conn);
  }

  onChange(listener: CredentialsListener): void {
    this.listeners.push(listener);
  }

  /** Revokes the account's key if it is active; false when the account has no such active key. */
  async revokeKey(keyId: string, accountId: string, now = new Date()): Promise<boolean> {
    const res = await this.keys.collection.updateOne({ _id: keyId, account_id: accountId, status: 'active' } as never, {
      $set: { status: 'revoked', revoked_at: now },
    });
    if (res.matchedCount === 0) return false;
    await this.changed(accountId);
    return true;
  }

  /** Sets when the account's active key stops working; false when the account has no such active key. */
  async expireKey(keyId: string, accountId: string, at: Date): Promise<boolean> {
    const res = await this.keys.collection.updateOne({ _id: keyId, account_id: accountId, status: 'active' } as never, {
      $set: { expires_at: at },
    });
    if (res.matchedCount === 0) return false;
    await this.changed(accountId);
    return true;
  }

  lastUsedOf(keyIds: readonly string[]): Promise<Map<string, Date>> {
    return this.usage.lastUsedOf(keyIds);
  }

  async setStatus(accountId: string, status: AccountDoc['status']): Promise<void> {
    await this.accounts.collection.updateOne({ _id: accountId } as never, { $set: { status } });
    await this.changed(accountId);
  }

  async setLimits(accountId: string, limits: NonNullable<AccountDoc['limits']>): Promise<void> {
    const set: Record<string, number> = {};
    for (const [k, v] of Object.entries(limits)) if (v !== undefined) set[`limits.${k}`] = v;
    if (Object.keys(set).length === 0) return;
    await this.accounts.collection.updateOne({ _id: accountId } as never, { $set: set });
    await this.changed(accountId);
  }

  private async changed(accountId: string): Promise<void> {
    await Promise.all(this.listeners.map((l) => l(accountId)));
  }

  async keysOf(accountId: string): Promise<ApiKeyDoc[]> {
    return this.keys.find({ account_id: accountId }).lean<ApiKeyDoc[]>().exec();
  }

  async keyById(keyId: string): Promise<ApiKeyDoc | null> {
    return this.keys.findById(keyId).lean<ApiKeyDoc>().exec();
  }

  async activeKey(keyId: string, accountId: string): Promise<ApiKeyDoc | null> {
    return this.keys.findOne({ _id: keyId, account_id: accountId, status: 'active' }).lean<ApiKeyDoc>().exec();
  }

  async insertKey(key: ApiKeyDoc): Promise<void> {
    await this.keys.create(key);
  }

  async keyByHash(hash: string): Promise<ApiKeyDoc | null> {
    return this.keys.collection.findOne({ hash }) as Promise<ApiKeyDoc | null>;
  }

  /**
   * The key with this hash and its account, both as stored now (a revoked key or a disabled
   * account shows at once). A key's account never changes, so once this process knows it, both
   * documents are read at the same time: one round trip of waiting instead of two.
   */
  async keyAndAccount(hash: string): Promise<Credentials> {
    const accountId = this.accountOfKey.get(hash);
    if (accountId !== undefined) {
      const [key, account] = await Promise.all([this.keyByHash(hash), this.account(accountId)]);
      if (!key || key.account_id === accountId) return { key, account };
    }
    const key = await this.keyByHash(hash);
    if (!key) return { key, account: null };
    this.accountOfKey.delete(hash);
    this.accountOfKey.set(hash, key.account_id);
    if (this.accountOfKey.size > ACCOUNT_OF_KEY_MAX) this.accountOfKey.delete(this.accountOfKey.keys().next().value as string);
    return { key, account: await this.account(key.account_id) };
  }

  async account(id: string): Promise<AccountDoc | null> {
    return this.accounts.collection.findOne({ _id: id } as never) as Promise<AccountDoc | null>;
  }
}
