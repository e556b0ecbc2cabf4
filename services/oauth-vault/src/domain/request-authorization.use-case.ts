import { newId } from '@tes/contracts';
import type { ConnectionKey } from './connection.js';
import { consentClaimsOf, issueConsentLink } from './consent-link.use-case.js';
import type { VaultDeps } from './deps.js';

export interface AuthorizationRequest {
  pendingId: string;
  /** A fresh consent link to the pending authorization (short-lived, single-use). */
  authUrl: string;
  scopes: string[];
}

/** A pending authorization reused while it has at least this long to live, so a user has one consent to give, not one per task. */
const REUSE_MIN_REMAINING_MS = 60 * 60 * 1000;

/**
 * A pending authorization for `scopes` (already the union of granted and needed) and a fresh
 * `auth_url` to it: a consent link on the vault's public server (see consent-link.use-case.ts).
 */
export async function requestAuthorization(
  key: ConnectionKey,
  scopes: string[],
  taskId: string,
  deps: VaultDeps,
): Promise<AuthorizationRequest> {
  const { pending, settings } = deps;
  const now = Date.now();
  const ttlMs = settings.pendingTtlS * 1000;
  const reusable = await pending.findReusable(key, scopes, new Date(now + Math.min(REUSE_MIN_REMAINING_MS, ttlMs / 2)));
  let pa = reusable;
  if (!pa) {
    pa = {
      _id: newId('pa'),
      ...pickKey(key),
      scopes,
      task_id: taskId,
      created_at: new Date(now),
      expires_at: new Date(now + ttlMs),
    };
    await pending.create(pa);
  }
  return { pendingId: pa._id, authUrl: issueConsentLink(consentClaimsOf(pa), deps).url, scopes };
}

export function pickKey(key: ConnectionKey): ConnectionKey {
  return { account_id: key.account_id, environment: key.environment, user_id: key.user_id, service: key.service };
}
