import type { ConsentLinkRenew } from '@tes/contracts';
import type { PendingAuthorizationDoc } from './pending-authorization.js';
import type { VaultDeps } from './deps.js';
import { InvalidTokenError, shortId, type ConsentClaims, type VerifiedConsent } from './signed-tokens.js';
import { startAuthorization, type StartOutcome } from './start-authorization.use-case.js';

/**
 * The `auth_url` handed to an application is a consent link: a signed token naming one pending
 * authorization (account, end user, service), valid for CONSENT_LINK_TTL_S and usable once.
 * Opening it shows a page of the vault (which application, which user); only continuing from
 * that page (a POST) uses it and starts the consent at the provider. The pending authorization
 * behind it lives longer (PENDING_AUTH_TTL_S): a fresh link for it is issued on every
 * credential.get and every read of the waiting task (consent_link.renew).
 */
export interface ConsentLink {
  url: string;
  expiresAt: Date;
}

export type OpenedLink = { kind: 'open'; link: VerifiedConsent; pending: PendingAuthorizationDoc } | { kind: 'gone' };

const PATH = '/oauth/consent/';

export function issueConsentLink(claims: ConsentClaims, deps: VaultDeps): ConsentLink {
  const { token, expiresAt } = deps.signer.signConsent(
    { pa: claims.pa, acct: claims.acct, env: claims.env, usr: claims.usr, svc: claims.svc },
    deps.settings.consentLinkTtlS,
  );
  return { url: `${deps.settings.publicBaseUrl}${PATH}${token}`, expiresAt };
}

export function consentClaimsOf(pa: PendingAuthorizationDoc): ConsentClaims {
  return { pa: pa._id, acct: pa.account_id, env: pa.environment, usr: pa.user_id, svc: pa.service };
}

/** A link that is valid, unused, and whose pending authorization still exists; otherwise gone (one answer for all: nothing to probe). */
export async function openConsentLink(token: string, deps: VaultDeps): Promise<OpenedLink> {
  let link: VerifiedConsent;
  try {
    link = deps.signer.verifyConsent(token);
  } catch {
    return { kind: 'gone' };
  }
  if (await deps.leases.exists(usedMarker(link.jti))) return { kind: 'gone' };
  const pending = await deps.pending.find(link.pa);
  if (
    !pending ||
    pending.expires_at.getTime() <= Date.now() ||
    pending.account_id !== link.acct ||
    pending.environment !== link.env ||
    pending.user_id !== link.usr
  ) {
    return { kind: 'gone' };
  }
  return { kind: 'open', link, pending };
}

/** The user pressed Continue: marks the link used (exactly once, across replicas) and starts the consent. */
export async function useConsentLink(link: VerifiedConsent, deps: VaultDeps): Promise<StartOutcome> {
  if (!(await deps.leases.once(usedMarker(link.jti), 'consent-link', new Date(link.exp * 1000)))) return { kind: 'expired' };
  deps.logger.info('consent link used', { link_id: shortId(link.jti), pending_id: shortId(link.pa), account_id: link.acct });
  return startAuthorization(link.pa, deps);
}

/**
 * consent_link.renew: a fresh link for the one a waiting task carries (expired or used alike),
 * for the same account and environment only. Also takes a pre-consent-link `/oauth/start/<id>`.
 */
export async function renewConsentLink(
  q: ConsentLinkRenew,
  deps: VaultDeps,
): Promise<{ ok: true; auth_url: string; expires_at: string } | { ok: false; error: { code: 'not_found'; message: string } }> {
  const notFound = { ok: false as const, error: { code: 'not_found' as const, message: 'That authorization is no longer pending' } };
  const pendingId = pendingIdOf(q.auth_url, deps);
  if (!pendingId) return notFound;
  const pending = await deps.pending.find(pendingId);
  if (
    !pending ||
    pending.account_id !== q.account_id ||
    pending.environment !== q.environment ||
    pending.expires_at.getTime() <= Date.now()
  ) {
    return notFound;
  }
  const link = issueConsentLink(consentClaimsOf(pending), deps);
  return { ok: true, auth_url: link.url, expires_at: link.expiresAt.toISOString() };
}

function pendingIdOf(authUrl: string, deps: VaultDeps): string | undefined {
  let path: string;
  try {
    path = new URL(authUrl).pathname;
  } catch {
    return undefined;
  }
  if (path.startsWith('/oauth/start/')) return path.slice('/oauth/start/'.length) || undefined;
  if (!path.startsWith(PATH)) return undefined;
  try {
    return deps.signer.verifyConsent(path.slice(PATH.length), { ignoreExpiration: true }).pa;
  } catch (err) {
    if (!(err instanceof InvalidTokenError)) throw err;
    return undefined;
  }
}

function usedMarker(jti: string): string {
  return `consent:${jti}`;
}
