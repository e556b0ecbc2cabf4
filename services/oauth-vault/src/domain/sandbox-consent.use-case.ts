import { randomBytes } from 'node:crypto';
import { newId, type CredentialGet, type CredentialReply } from '@tes/contracts';
import { coversScopes, normalizeScopes } from '../oauth-providers/provider-registry.js';
import { connectionIdOf, type ConnectionDoc, type ConnectionKey } from './connection.js';
import type { PendingAuthorizationDoc } from './pending-authorization.js';
import { authorizedDoc, openAccessToken } from './connection-docs.js';
import type { VaultDeps } from './deps.js';
import { pickKey } from './request-authorization.use-case.js';

/**
 * Test keys meet the same consent pause as live ones, without a provider: a test-environment
 * connection is made on the vault's sandbox consent page (Allow / Deny), holds a random token
 * the sandbox never uses, is never refreshed, probed or revoked at a provider, and is announced
 * with connection.changed exactly like a live consent.
 */
export const SANDBOX_TOKEN_TYPE = 'sandbox';

export function sandboxConsentUrl(deps: VaultDeps, pendingId: string): string {
  return `${deps.settings.publicBaseUrl}/sandbox/consent/${pendingId}`;
}

/** credential.get of the test environment: the sandbox connection's token, or authorization_required to the sandbox page. */
export async function sandboxCredential(q: CredentialGet, deps: VaultDeps): Promise<CredentialReply> {
  const provider = await deps.providers.resolve(q.service, q);
  if (!provider) return { status: 'error', message: `No OAuth provider is known for service ${q.service}` };
  const key = pickKey(q);
  const needed = normalizeScopes(q.scopes);
  const doc = await deps.connections.find(connectionIdOf(key));
  if (usable(doc) && coversScopes(doc.scopes, needed)) return { status: 'ok', access_token: openAccessToken(doc, deps.ring) };

  const granted = usable(doc) ? doc.scopes : [];
  const scopes = normalizeScopes([...granted, ...provider.defaultScopes, ...needed]);
  const pendingId = await pendingFor(key, scopes, q.task_id, deps);
  return {
    status: 'authorization_required',
    auth_url: sandboxConsentUrl(deps, pendingId),
    message: `Authorize ${provider.displayName} (sandbox) for user ${key.user_id} to continue`,
  };
}

function usable(doc: ConnectionDoc | null): doc is ConnectionDoc {
  return doc !== null && doc.status === 'connected' && doc.access_token_enc !== null;
}

/** One link per user, service and scopes while it lives (as live), so five waiting tasks show one link. */
async function pendingFor(key: ConnectionKey, scopes: string[], taskId: string, deps: VaultDeps): Promise<string> {
  const now = Date.now();
  const ttlMs = deps.settings.pendingTtlS * 1000;
  const reusable = await deps.pending.findReusable(key, scopes, new Date(now + ttlMs / 2));
  if (reusable) return reusable._id;
  const id = newId('pa');
  await deps.pending.create({ _id: id, ...key, scopes, task_id: taskId, created_at: new Date(now), expires_at: new Date(now + ttlMs) });
  return id;
}

export type SandboxPageView = { kind: 'ask'; displayName: string; pending: PendingAuthorizationDoc } | { kind: 'expired' };

/** What the sandbox consent page shows for a link: only a live, test-environment pending authorization. */
export async function sandboxConsentView(pendingId: string, deps: VaultDeps): Promise<SandboxPageView> {
  const pending = await openPending(pendingId, deps);
  if (!pending) return { kind: 'expired' };
  return { kind: 'ask', displayName: await deps.providers.displayName(pending.service, pending), pending };
}

export type SandboxDecision = 'allow' | 'deny';
export type SandboxOutcome = { kind: 'connected' | 'denied'; displayName: string } | { kind: 'expired' };

/**
 * Allow: the sandbox connection is stored (scopes as asked) and connection.changed authorized
 * resumes the user's waiting tasks. Deny: connection.changed denied fails them. Single use: a
 * claim on the link first (two clicks race for it), then the pending authorization is deleted.
 */
export async function decideSandboxConsent(pendingId: string, decision: SandboxDecision, deps: VaultDeps): Promise<SandboxOutcome> {
  const pending = await openPending(pendingId, deps);
  if (!pending || !(await deps.leases.once(`sandbox:${pending._id}`, 'sandbox-consent', pending.expires_at))) return { kind: 'expired' };
  await deps.pending.delete(pending._id);
  const key = pickKey(pending);
  const displayName = await deps.providers.displayName(key.service, key);
  const log = deps.logger.child({ account_id: key.account_id, service: key.service, environment: 'test' });
  if (decision === 'deny') {
    await deps.announcer.send(await deps.announcer.prepare({ ...key, outcome: 'denied', scopes: pending.scopes }, null));
    log.info('sandbox consent denied');
    return { kind: 'denied', displayName };
  }
  const id = connectionIdOf(key);
  const event = await deps.announcer.prepare({ ...key, outcome: 'authorized', scopes: pending.scopes }, id);
  const tokens = {
    accessToken: `sandbox_${randomBytes(16).toString('hex')}`,
    tokenType: SANDBOX_TOKEN_TYPE,
    refreshToken: undefined,
    expiresIn: undefined,
    scopes: pending.scopes,
  };
  // No expiry, no refresh token, no probes: nothing to keep alive at a provider.
  const schedule = { ...deps.settings, probeIntervalMs: 0 };
  await deps.connections.mutate(id, 'authorize', {
    needed: () => true,
    apply: async (prev) => authorizedDoc(id, key, prev, tokens, pending.scopes, event._id, deps.ring, schedule),
  });
  await deps.announcer.send(event);
  log.info('sandbox connection authorized', { scopes: pending.scopes });
  return { kind: 'connected', displayName };
}

/** A pending authorization of the test environment that has not expired; a live one never opens here. */
async function openPending(pendingId: string, deps: VaultDeps): Promise<PendingAuthorizationDoc | null> {
  if (!/^pa_[A-Za-z0-9_-]{1,64}$/.test(pendingId)) return null;
  const pending = await deps.pending.find(pendingId);
  if (!pending || pending.environment !== 'test' || pending.expires_at.getTime() <= Date.now()) return null;
  return pending;
}
