import { newId, type Environment } from '@tes/contracts';
import type { AccountStore, ApiKey } from '../domain/account.js';
import { generateApiKey, hashApiKey } from '../domain/api-key.js';

/**
 * API keys as the dashboard manages them: the same documents the operator CLI writes
 * (SHA-256, prefix, last four). A revocation goes through the repository, which announces it:
 * every replica's credential cache drops the key at once (CredentialsCache).
 */
export interface KeyView {
  id: string;
  environment: Environment;
  prefix: string;
  last4: string;
  status: 'active' | 'revoked';
  created_at: Date;
  revoked_at: Date | null;
}

export function keyView(k: ApiKey): KeyView {
  return {
    id: k._id,
    environment: k.environment,
    prefix: k.prefix,
    last4: k.last4,
    status: k.status,
    created_at: new Date(k.created_at),
    revoked_at: k.revoked_at ? new Date(k.revoked_at) : null,
  };
}

/** Active keys first (newest first), then revoked ones (most recently revoked first). */
export async function listKeys(accounts: AccountStore, accountId: string): Promise<KeyView[]> {
  const docs = await accounts.keysOf(accountId);
  const views = docs.map(keyView);
  const time = (k: KeyView) => (k.status === 'active' ? k.created_at : (k.revoked_at ?? k.created_at)).getTime();
  return views.sort((a, b) => (a.status === b.status ? time(b) - time(a) : a.status === 'active' ? -1 : 1));
}

/** A new key; the full key is returned once and never stored. */
export async function createKey(
  accounts: AccountStore,
  accountId: string,
  environment: Environment,
): Promise<{ key: KeyView; secret: string }> {
  const secret = generateApiKey(environment);
  const doc: ApiKey = {
    _id: newId('key'),
    account_id: accountId,
    environment,
    hash: hashApiKey(secret),
    prefix: `pk_${environment}_`,
    last4: secret.slice(-4),
    status: 'active',
    created_at: new Date(),
  };
  await accounts.insertKey(doc);
  return { key: keyView(doc), secret };
}

/** Revokes one of the account's active keys; null when there is no such active key. */
export async function revokeKey(accounts: AccountStore, accountId: string, keyId: string, now = new Date()): Promise<KeyView | null> {
  if (!(await accounts.revokeKey(keyId, accountId, now))) return null;
  const doc = await accounts.keyById(keyId);
  return doc ? keyView(doc) : null;
}

/**
 * Rotation: a new key of the same environment first, then the old one revoked. A failure in
 * between leaves both working (never none); the owner can revoke the old one again.
 */
export async function rotateKey(
  accounts: AccountStore,
  accountId: string,
  keyId: string,
): Promise<{ key: KeyView; secret: string; revoked: KeyView } | null> {
  const old = await accounts.activeKey(keyId, accountId);
  if (!old) return null;
  const created = await createKey(accounts, accountId, old.environment);
  const revoked = await revokeKey(accounts, accountId, keyId);
  return { ...created, revoked: revoked ?? { ...keyView(old), status: 'revoked', revoked_at: new Date() } };
}

export function maskedKey(k: Pick<KeyView, 'prefix' | 'last4'>): string {
  return `${k.prefix}…${k.last4}`;
}
