import { newId, type Environment } from '@tes/contracts';
import type { AccountStore, ApiKey } from '../domain/account.js';
import { generateApiKey, hashApiKey, keyUsable, ROLL_EXPIRIES, type RollExpiry } from '../domain/api-key.js';

/**
 * API keys as the dashboard and the operator CLI manage them (SHA-256, prefix, last four, an
 * optional name). A revocation or a roll goes through the repository, which announces it: every
 * replica's credential cache drops the key at once (CredentialsCache).
 */
export interface KeyView {
  id: string;
  environment: Environment;
  name: string | null;
  prefix: string;
  last4: string;
  /** `expiring`: rolled with a delay, still working until `expires_at`; `expired`: past it. */
  status: 'active' | 'expiring' | 'expired' | 'revoked';
  created_at: Date;
  revoked_at: Date | null;
  expires_at: Date | null;
  /** Up to a minute behind (one write per key per minute); null when never recorded. */
  last_used_at: Date | null;
}

export function keyView(k: ApiKey, lastUsed: Date | null = null, nowMs = Date.now()): KeyView {
  const expiresAt = k.expires_at ? new Date(k.expires_at) : null;
  const status = k.status === 'revoked' ? 'revoked' : !keyUsable(k, nowMs) ? 'expired' : expiresAt ? 'expiring' : 'active';
  return {
    id: k._id,
    environment: k.environment,
    name: k.name ?? null,
    prefix: k.prefix,
    last4: k.last4,
    status,
    created_at: new Date(k.created_at),
    revoked_at: k.revoked_at ? new Date(k.revoked_at) : null,
    expires_at: expiresAt,
    last_used_at: lastUsed,
  };
}

/** Whether the key still authenticates requests (active, or expiring and not yet expired). */
export function isWorking(k: KeyView): boolean {
  return k.status === 'active' || k.status === 'expiring';
}

/** Working keys first (newest first), then expired and revoked ones (most recently ended first). */
export async function listKeys(accounts: AccountStore, accountId: string, nowMs = Date.now()): Promise<KeyView[]> {
  const docs = await accounts.keysOf(accountId);
  const used = await accounts.lastUsedOf(docs.map((d) => d._id));
  const views = docs.map((d) => keyView(d, used.get(d._id) ?? null, nowMs));
  const time = (k: KeyView) => (isWorking(k) ? k.created_at : (k.revoked_at ?? k.expires_at ?? k.created_at)).getTime();
  return views.sort((a, b) => (isWorking(a) === isWorking(b) ? time(b) - time(a) : isWorking(a) ? -1 : 1));
}

/** A new key; the full key is returned once and never stored. */
export async function createKey(
  accounts: AccountStore,
  accountId: string,
  environment: Environment,
  name?: string,
): Promise<{ key: KeyView; secret: string }> {
  const secret = generateApiKey(environment);
  const doc: ApiKey = {
    _id: newId('key'),
    account_id: accountId,
    environment,
    hash: hashApiKey(secret),
    prefix: `pk_${environment}_`,
    last4: secret.slice(-4),
    ...(name?.trim() ? { name: name.trim() } : {}),
    status: 'active',
    created_at: new Date(),
  };
  await accounts.insertKey(doc);
  return { key: keyView(doc), secret };
}

/** Revokes one of the account's keys at once (an expiring one too); null when there is no such active key. */
export async function revokeKey(accounts: AccountStore, accountId: string, keyId: string, now = new Date()): Promise<KeyView | null> {
  if (!(await accounts.revokeKey(keyId, accountId, now))) return null;
  const doc = await accounts.keyById(keyId);
  return doc ? keyView(doc) : null;
}

/**
 * Rolling (as Stripe's): a new key of the same environment and name first, then the old one
 * revoked (`now`) or given an expiry (1 h, 24 h, 7 days) until which both work. An expiry already
 * set earlier is kept (a roll never extends a key's life). A failure in between leaves both
 * working (never none); the owner can revoke the old one. Null when the key is not working.
 */
export async function rollKey(
  accounts: AccountStore,
  accountId: string,
  keyId: string,
  expiresIn: RollExpiry,
  now = new Date(),
): Promise<{ key: KeyView; secret: string; old: KeyView } | null> {
  const old = await accounts.activeKey(keyId, accountId);
  if (!old || !keyUsable(old, now.getTime())) return null;
  const created = await createKey(accounts, accountId, old.environment, old.name);
  if (expiresIn === 'now') {
    const revoked = await revokeKey(accounts, accountId, keyId, now);
    return { ...created, old: revoked ?? keyView({ ...old, status: 'revoked', revoked_at: now }) };
  }
  const requested = now.getTime() + ROLL_EXPIRIES[expiresIn];
  const at = new Date(old.expires_at ? Math.min(new Date(old.expires_at).getTime(), requested) : requested);
  if (await accounts.expireKey(keyId, accountId, at)) return { ...created, old: keyView({ ...old, expires_at: at }, null, now.getTime()) };
  // Revoked meanwhile (another tab, the CLI): say so.
  const current = await accounts.keyById(keyId);
  return { ...created, old: keyView(current ?? { ...old, status: 'revoked' }, null, now.getTime()) };
}

export function maskedKey(k: Pick<KeyView, 'prefix' | 'last4'>): string {
  return `${k.prefix}…${k.last4}`;
}
