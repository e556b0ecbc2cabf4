import type { ConnectionDoc, ConnectionKey } from './connection.js';
import type { TokenSet } from '../oauth-providers/oauth-client.js';
import type { KeyRing } from '@tes/sealing';

/** Timing knobs every connection write needs. */
export interface Schedule {
  /** The sweep refreshes this long before expiry (capped at half the token's lifetime). */
  refreshAheadMs: number;
  /** 0: no health probes. */
  probeIntervalMs: number;
}

type NewDoc = Omit<ConnectionDoc, 'generation'>;

/** Associated data of a sealed field: the ciphertext only opens in its own place. */
export function aadOf(connectionId: string, field: 'access_token' | 'refresh_token'): string {
  return `${connectionId}:${field}`;
}

export function openAccessToken(doc: ConnectionDoc, ring: KeyRing): string {
  if (!doc.access_token_enc) throw new Error('connection has no access token');
  return ring.decrypt(doc.access_token_enc, aadOf(doc._id, 'access_token'));
}

export function openRefreshToken(doc: ConnectionDoc, ring: KeyRing): string | undefined {
  return doc.refresh_token_enc ? ring.decrypt(doc.refresh_token_enc, aadOf(doc._id, 'refresh_token')) : undefined;
}

function sealed(id: string, ring: KeyRing, access: string, refresh: string | undefined) {
  return {
    access_token_enc: ring.encrypt(access, aadOf(id, 'access_token')),
    refresh_token_enc: refresh ? ring.encrypt(refresh, aadOf(id, 'refresh_token')) : null,
    key_id: ring.currentKid,
  };
}

function timing(tokens: TokenSet, hasRefresh: boolean, now: number, s: Schedule) {
  const expiresAt = tokens.expiresIn !== undefined ? new Date(now + tokens.expiresIn * 1000) : null;
  const ahead = tokens.expiresIn !== undefined ? Math.min(s.refreshAheadMs, (tokens.expiresIn * 1000) / 2) : 0;
  return {
    expires_at: expiresAt,
    lifetime_s: tokens.expiresIn ?? null,
    next_refresh_at: expiresAt && hasRefresh ? new Date(expiresAt.getTime() - ahead) : null,
    next_probe_at: s.probeIntervalMs > 0 ? new Date(now + s.probeIntervalMs) : null,
  };
}

/** After a completed consent: new tokens, the granted scopes, status connected. */
export function authorizedDoc(
  id: string,
  key: ConnectionKey,
  prev: ConnectionDoc | null,
  tokens: TokenSet,
  scopes: string[],
  eventId: string,
  ring: KeyRing,
  s: Schedule,
  now = Date.now(),
): NewDoc {
  // A re-consent that returns no refresh token keeps the one of the same grant.
  const refresh = tokens.refreshToken ?? (prev && prev.status === 'connected' ? openRefreshToken(prev, ring) : undefined);
  return {
    _id: id,
    account_id: key.account_id,
    environment: key.environment,
    user_id: key.user_id,
    service: key.service,
    status: 'connected',
    scopes,
    ...sealed(id, ring, tokens.accessToken, refresh),
    token_type: tokens.tokenType,
    ...timing(tokens, refresh !== undefined, now, s),
    created_at: prev?.created_at ?? new Date(now),
    authorized_at: new Date(now),
    refreshed_at: null,
    last_probe_at: null,
    broken_at: null,
    broken_reason: null,
    revoked_at: null,
    last_event_id: eventId,
    updated_at: new Date(now),
  };
}

/** After a refresh: the new access token, and the new refresh token when the provider rotated it. */
export function refreshedDoc(prev: ConnectionDoc, tokens: TokenSet, ring: KeyRing, s: Schedule, now = Date.now()): NewDoc {
  const refresh = tokens.refreshToken ?? openRefreshToken(prev, ring);
  return {
    ...prev,
    ...sealed(prev._id, ring, tokens.accessToken, refresh),
    token_type: tokens.tokenType,
    // A refresh may narrow scopes (RFC 6749 6); it never widens them.
    scopes: tokens.scopes ? prev.scopes.filter((x) => tokens.scopes?.includes(x)) : prev.scopes,
    ...timing(tokens, refresh !== undefined, now, s),
    refreshed_at: new Date(now),
    updated_at: new Date(now),
  };
}

/** The grant is dead (refresh refused, token rejected): no tokens kept, nothing scheduled. */
export function brokenDoc(prev: ConnectionDoc, reason: string, now = Date.now()): NewDoc {
  return {
    ...prev,
    status: 'broken',
    access_token_enc: null,
    refresh_token_enc: null,
    key_id: null,
    next_refresh_at: null,
    next_probe_at: null,
    broken_at: new Date(now),
    broken_reason: reason,
    updated_at: new Date(now),
  };
}

export function revokedDoc(prev: ConnectionDoc, eventId: string, now = Date.now()): NewDoc {
  return {
    ...prev,
    status: 'revoked',
    access_token_enc: null,
    refresh_token_enc: null,
    key_id: null,
    token_type: null,
    expires_at: null,
    lifetime_s: null,
    next_refresh_at: null,
    next_probe_at: null,
    revoked_at: new Date(now),
    last_event_id: eventId,
    updated_at: new Date(now),
  };
}

/** The same tokens sealed again under the ring's current key. */
export function resealedDoc(prev: ConnectionDoc, ring: KeyRing, now = Date.now()): NewDoc {
  return {
    ...prev,
    ...sealed(prev._id, ring, openAccessToken(prev, ring), openRefreshToken(prev, ring)),
    updated_at: new Date(now),
  };
}
