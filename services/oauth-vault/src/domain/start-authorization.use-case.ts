import { createHash, randomBytes } from 'node:crypto';
import type { VaultDeps } from './deps.js';
import { redirectUri } from './deps.js';
import { sha256 } from './signed-tokens.js';
import { scopeParams } from '../oauth-providers/provider-registry.js';

export type StartOutcome =
  | { kind: 'redirect'; location: string; cookie: { name: string; value: string; maxAgeS: number } }
  | { kind: 'expired' }
  | { kind: 'unavailable'; service: string };

/** Cookie that ties a consent to the browser that started it (login-CSRF defence). */
export function browserCookieName(jti: string): string {
  return `tes_oauth_${createHash('sha256').update(jti).digest('hex').slice(0, 16)}`;
}

/** AAD of a sealed PKCE verifier. */
export function verifierAad(jti: string): string {
  return `auth_attempt:${jti}:code_verifier`;
}

/**
 * The browser opened an `auth_url`: a new consent attempt. Makes the PKCE verifier (sealed in
 * the attempt record), a browser nonce (a cookie; its hash goes in the state), and the signed,
 * short-lived, single-use `state`, and answers with the provider's authorize URL.
 */
export async function startAuthorization(pendingId: string, deps: VaultDeps): Promise<StartOutcome> {
  const { pending, providers, signer, ring, settings } = deps;
  const pa = await pending.find(pendingId);
  if (!pa || pa.expires_at.getTime() <= Date.now()) return { kind: 'expired' };
  const provider = await providers.resolve(pa.service, pa);
  if (!provider?.configured || !provider.clientId) return { kind: 'unavailable', service: pa.service };

  const nonce = randomBytes(32).toString('base64url');
  const verifier = provider.pkce ? randomBytes(32).toString('base64url') : undefined;
  const { token, jti } = signer.signState(
    { pa: pa._id, acct: pa.account_id, env: pa.environment, usr: pa.user_id, svc: pa.service, scp: pa.scopes, bnh: sha256(nonce) },
    settings.stateTtlS,
  );
  const now = Date.now();
  await pending.createAttempt({
    _id: jti,
    pending_id: pa._id,
    code_verifier_enc: verifier ? ring.encrypt(verifier, verifierAad(jti)) : null,
    created_at: new Date(now),
    expires_at: new Date(now + settings.stateTtlS * 1000),
  });

  const url = new URL(provider.authorizeUrl);
  const params: Record<string, string> = {
    ...provider.authorizeParams,
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: redirectUri(settings),
    state: token,
  };
  Object.assign(params, scopeParams(provider, pa.scopes));
  if (verifier) {
    params['code_challenge'] = createHash('sha256').update(verifier).digest('base64url');
    params['code_challenge_method'] = 'S256';
  }
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return {
    kind: 'redirect',
    location: url.toString(),
    cookie: { name: browserCookieName(jti), value: nonce, maxAgeS: settings.stateTtlS },
  };
}
