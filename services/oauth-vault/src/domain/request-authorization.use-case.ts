import { newId } from '@tes/contracts';
import type { ConnectionKey } from '../store/connection.repository.js';
import type { VaultDeps } from './deps.js';

export interface AuthorizationRequest {
  pendingId: string;
  authUrl: string;
  scopes: string[];
}

/** An `auth_url` reused while it has at least this long to live, so a user sees one link, not one per task. */
const REUSE_MIN_REMAINING_MS = 60 * 60 * 1000;

/**
 * A pending authorization for `scopes` (already the union of granted and needed) and its
 * `auth_url` on the vault's public server: `/oauth/start/<id>` redirects the browser to the
 * provider with a fresh signed `state` each time it is opened.
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
  let id = reusable?._id;
  if (!id) {
    id = newId('pa');
    await pending.create({
      _id: id,
      ...pickKey(key),
      scopes,
      task_id: taskId,
      created_at: new Date(now),
      expires_at: new Date(now + ttlMs),
    });
  }
  return { pendingId: id, authUrl: `${settings.publicBaseUrl}/oauth/start/${id}`, scopes };
}

export function pickKey(key: ConnectionKey): ConnectionKey {
  return { account_id: key.account_id, environment: key.environment, user_id: key.user_id, service: key.service };
}
