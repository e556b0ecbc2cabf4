import type { CredentialGet, CredentialReply } from '@tes/contracts';
import { coversScopes, normalizeScopes, type Provider } from '../oauth-providers/provider-registry.js';
import { ProviderCallError } from '../oauth-providers/oauth-client.js';
import { connectionIdOf, type ConnectionDoc, type ConnectionKey } from './connection.js';
import { openAccessToken } from './connection-docs.js';
import type { VaultDeps } from './deps.js';
import { markBroken, refreshConnection } from './refresh-connection.js';
import { pickKey, requestAuthorization } from './request-authorization.use-case.js';
import { sandboxCredential } from './sandbox-consent.use-case.js';

/** A force_refresh right after a refresh or consent takes the fresh token instead of refreshing again. */
export const FORCE_REFRESH_DEDUPE_MS = 2000;

/**
 * credential.get: a usable access token for the user's service, or why not. The only answer
 * that ever carries a raw token (to the executor, over the internal channel).
 *  - no connection, revoked, or scopes missing → authorization_required with an auth_url
 *    (incremental: the union of granted, needed and the provider's default scopes);
 *  - broken (a refresh was refused, the token was rejected) → expired, with an auth_url to re-consent;
 *  - expiring within REFRESH_MARGIN_S (at most half its lifetime), or force_refresh → refreshed
 *    first (single-flight);
 *  - provider unreachable while the token is already expired → error (retryable).
 */
export async function getCredential(q: CredentialGet, deps: VaultDeps): Promise<CredentialReply> {
  if (q.environment === 'test') return sandboxCredential(q, deps);
  const provider = await deps.providers.resolve(q.service, q);
  if (!provider) return { status: 'error', message: `No OAuth provider is known for service ${q.service}` };
  if (!provider.configured) return { status: 'error', message: `OAuth for ${provider.displayName} is not configured on this deployment` };
  const key = pickKey(q);
  const id = connectionIdOf(key);
  const needed = normalizeScopes(q.scopes);
  const doc = await deps.connections.find(id);

  if (!doc || doc.status === 'revoked' || (doc.status === 'connected' && !doc.access_token_enc)) {
    return authorizationRequired(key, provider, normalizeScopes([...provider.defaultScopes, ...needed]), q.task_id, deps, 'not connected');
  }
  if (doc.status === 'broken') return expired(key, provider, doc, needed, q.task_id, deps);
  if (!coversScopes(doc.scopes, needed)) {
    return authorizationRequired(
      key,
      provider,
      normalizeScopes([...doc.scopes, ...provider.defaultScopes, ...needed]),
      q.task_id,
      deps,
      'more scopes needed',
    );
  }

  const now = Date.now();
  const expiresAt = doc.expires_at?.getTime();
  const isExpired = expiresAt !== undefined && expiresAt <= now;
  // "Close to expiry" is at most half the token's lifetime: a short-lived token is not refreshed on every use.
  const margin = Math.min(deps.settings.refreshMarginMs, doc.lifetime_s ? (doc.lifetime_s * 1000) / 2 : Infinity);
  const expiring = expiresAt !== undefined && expiresAt - now <= margin;
  const lastFresh = Math.max(doc.refreshed_at?.getTime() ?? 0, doc.authorized_at.getTime());
  const forced = q.force_refresh === true && now - lastFresh > FORCE_REFRESH_DEDUPE_MS;
  if (!expiring && !forced) return ok(doc, deps);

  if (!doc.refresh_token_enc) {
    if (!isExpired && !forced) return ok(doc, deps);
    const broken = await markBroken(doc, deps, forced ? 'token_rejected' : 'token_expired');
    return broken.status === 'connected' && broken.access_token_enc
      ? ok(broken, deps)
      : expired(key, provider, broken, needed, q.task_id, deps);
  }

  let fresh: ConnectionDoc;
  try {
    fresh = await refreshConnection(doc, deps, forced ? 'force_refresh' : 'at_use');
  } catch (err) {
    if (err instanceof ProviderCallError && !isExpired && !forced) return ok(doc, deps);
    deps.logger.warn('credential unavailable: refresh failed', { service: q.service, task_id: q.task_id, error: String(err) });
    return { status: 'error', message: `${provider.displayName} could not be reached to refresh the token; retry later` };
  }
  if (fresh.status === 'broken') return expired(key, provider, fresh, needed, q.task_id, deps);
  if (fresh.status !== 'connected' || !fresh.access_token_enc) {
    return authorizationRequired(key, provider, normalizeScopes([...provider.defaultScopes, ...needed]), q.task_id, deps, 'not connected');
  }
  return ok(fresh, deps);
}

function ok(doc: ConnectionDoc, deps: VaultDeps): CredentialReply {
  return {
    status: 'ok',
    access_token: openAccessToken(doc, deps.ring),
    ...(doc.expires_at ? { expires_at: doc.expires_at.toISOString() } : {}),
  };
}

async function authorizationRequired(
  key: ConnectionKey,
  provider: Provider,
  scopes: string[],
  taskId: string,
  deps: VaultDeps,
  why: 'not connected' | 'more scopes needed',
): Promise<CredentialReply> {
  const req = await requestAuthorization(key, scopes, taskId, deps);
  const message =
    why === 'not connected'
      ? `Authorize ${provider.displayName} for user ${key.user_id} to continue`
      : `Authorize additional ${provider.displayName} permissions for user ${key.user_id} to continue`;
  return { status: 'authorization_required', auth_url: req.authUrl, message };
}

async function expired(
  key: ConnectionKey,
  provider: Provider,
  doc: ConnectionDoc,
  needed: string[],
  taskId: string,
  deps: VaultDeps,
): Promise<CredentialReply> {
  const req = await requestAuthorization(key, normalizeScopes([...doc.scopes, ...provider.defaultScopes, ...needed]), taskId, deps);
  return {
    status: 'expired',
    auth_url: req.authUrl,
    message: `The ${provider.displayName} authorization of user ${key.user_id} has expired or was revoked at ${provider.displayName}; re-authorize to continue`,
  };
}
