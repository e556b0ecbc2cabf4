import { normalizeScopes } from '../oauth-providers/provider-registry.js';
import { ProviderCallError } from '../oauth-providers/oauth-client.js';
import { connectionIdOf } from './connection.js';
import { authorizedDoc } from './connection-docs.js';
import type { VaultDeps } from './deps.js';
import { redirectUri } from './deps.js';
import { issueConsentLink } from './consent-link.use-case.js';
import { InvalidTokenError, safeEqual, sha256, shortId, type VerifiedState } from './signed-tokens.js';
import { browserCookieName, verifierAad } from './start-authorization.use-case.js';

export interface CallbackInput {
  state: string | undefined;
  code: string | undefined;
  error: string | undefined;
  /** The browser's cookies (the nonce set by /oauth/start). */
  cookies: Record<string, string>;
}

/** What the callback page shows; never a token. */
export type CallbackOutcome =
  | { kind: 'connected'; service: string; displayName: string; scopes: string[] }
  | { kind: 'denied'; service: string; displayName: string }
  | { kind: 'provider_error'; displayName: string; error: string; retryUrl: string }
  | { kind: 'exchange_failed'; displayName: string; retryUrl: string }
  | { kind: 'invalid_state'; reason: 'missing' | 'expired' | 'invalid' | 'other_browser' | 'replayed' };

/**
 * The provider redirected the browser back. Validates the state (signature, expiry, same
 * browser, single use through an insert), then either records a denial or exchanges the code
 * (with the PKCE verifier), stores the tokens sealed, and announces connection.changed.
 */
export async function completeAuthorization(input: CallbackInput, deps: VaultDeps): Promise<CallbackOutcome> {
  const { signer, leases, providers, pending, oauth, ring, connections, announcer, settings, logger } = deps;
  if (!input.state) return { kind: 'invalid_state', reason: 'missing' };
  let state: VerifiedState;
  try {
    state = signer.verifyState(input.state);
  } catch (err) {
    return { kind: 'invalid_state', reason: err instanceof InvalidTokenError && err.reason === 'expired' ? 'expired' : 'invalid' };
  }
  const nonce = input.cookies[browserCookieName(state.jti)];
  if (!nonce || !safeEqual(sha256(nonce), state.bnh)) return { kind: 'invalid_state', reason: 'other_browser' };
  if (!(await leases.once(`state:${state.jti}`, 'oauth-state', new Date(state.exp * 1000))))
    return { kind: 'invalid_state', reason: 'replayed' };

  const key = { account_id: state.acct, environment: state.env, user_id: state.usr, service: state.svc };
  const provider = await providers.resolve(state.svc, key);
  const displayName = provider?.displayName ?? state.svc;
  // "Try again" is a fresh consent link: this browser holds the state and its cookie, so it is the user's.
  const retryUrl = issueConsentLink({ pa: state.pa, acct: state.acct, env: state.env, usr: state.usr, svc: state.svc }, deps).url;
  const log = logger.child({ account_id: state.acct, service: state.svc, pending_id: shortId(state.pa) });

  if (input.error) {
    if (input.error === 'access_denied') {
      const event = await announcer.prepare({ ...key, outcome: 'denied', scopes: state.scp }, null);
      await announcer.send(event);
      log.info('consent denied by the user');
      return { kind: 'denied', service: state.svc, displayName };
    }
    log.warn('provider returned an error to the callback', { error_code: input.error.slice(0, 64) });
    return { kind: 'provider_error', displayName, error: input.error.slice(0, 64), retryUrl };
  }
  if (!input.code || !provider?.configured) return { kind: 'exchange_failed', displayName, retryUrl };

  const attempt = await pending.findAttempt(state.jti);
  const verifier = attempt?.code_verifier_enc ? ring.decrypt(attempt.code_verifier_enc, verifierAad(state.jti)) : undefined;
  if (provider.pkce && !verifier) return { kind: 'exchange_failed', displayName, retryUrl };
  let tokens;
  try {
    tokens = await oauth.exchangeCode(provider, { code: input.code, redirectUri: redirectUri(settings), codeVerifier: verifier });
  } catch (err) {
    log.warn('code exchange failed', { error: err instanceof ProviderCallError ? err.message : String(err) });
    return { kind: 'exchange_failed', displayName, retryUrl };
  }
  const scopes = tokens.scopes ?? normalizeScopes(state.scp);
  const id = connectionIdOf(key);
  const event = await announcer.prepare({ ...key, outcome: 'authorized', scopes }, id);
  await connections.mutate(id, 'authorize', {
    needed: () => true,
    apply: async (prev) => authorizedDoc(id, key, prev, tokens, scopes, event._id, ring, settings),
  });
  await announcer.send(event);
  log.info('connection authorized', { scopes });
  return { kind: 'connected', service: state.svc, displayName, scopes };
}
