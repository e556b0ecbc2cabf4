import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { serializeCookie } from '@tes/http';
import type { Logger } from '@tes/logger';
import type { Config } from '../config.js';
import { placeholderSecretReason } from './placeholder-secret.js';

/**
 * Dashboard sessions and CSRF tokens.
 *
 * - The session is an HS256 JWT (jsonwebtoken) in an HttpOnly, Secure, SameSite=Strict cookie
 *   with the `__Host-` prefix (host-only, Path=/, Secure). Claims: `sub` owner id, `acct`
 *   account id, `sid` a random session id, `pwd` a fingerprint of the password hash (so a
 *   password change ends every session), `exp` SESSION_TTL_S after sign-in.
 * - A CSRF token is an HMAC of what it is bound to: `session:<sid>` for signed-in forms (so a
 *   token works only with the session it was made for), `pre:<nonce>` for the sign-in form,
 *   where the nonce is a random value in its own `__Host-` cookie (double submit, signed).
 * - Both keys are derived (HKDF-SHA256) from DASHBOARD_SESSION_SECRET, each for its purpose.
 */
export const SESSION_COOKIE = '__Host-tes_session';
export const PRESESSION_COOKIE = '__Host-tes_signin';
export const SESSION_TTL_S = 8 * 3600;
const ISSUER = 'tes-gateway';
const AUDIENCE = 'tes-dashboard';
const SECRET_MIN = 32;

export interface SessionClaims {
  /** Owner id. */
  sub: string;
  acct: string;
  sid: string;
  pwd: string;
}

export class SessionKeys {
  readonly sessionKey: Buffer;
  readonly csrfKey: Buffer;

  constructor(secret: string) {
    if (secret.length < SECRET_MIN) throw new Error(`DASHBOARD_SESSION_SECRET must have at least ${SECRET_MIN} characters`);
    this.sessionKey = Buffer.from(hkdfSync('sha256', secret, 'tes-dashboard', 'session-jwt', 32));
    this.csrfKey = Buffer.from(hkdfSync('sha256', secret, 'tes-dashboard', 'csrf', 32));
  }

  issue(c: Omit<SessionClaims, 'sid'>, ttlS = SESSION_TTL_S): { token: string; sid: string } {
    const sid = randomBytes(18).toString('base64url');
    const token = jwt.sign({ acct: c.acct, sid, pwd: c.pwd }, this.sessionKey, {
      algorithm: 'HS256',
      subject: c.sub,
      issuer: ISSUER,
      audience: AUDIENCE,
      expiresIn: ttlS,
    });
    return { token, sid };
  }

  /** The claims of a valid, unexpired session token of ours; null otherwise (never throws). */
  verify(token: string | undefined): SessionClaims | null {
    if (!token || token.length > 4096) return null;
    try {
      const p = jwt.verify(token, this.sessionKey, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE });
      if (typeof p !== 'object' || p === null) return null;
      const { sub, acct, sid, pwd } = p as Record<string, unknown>;
      if (typeof sub !== 'string' || typeof acct !== 'string' || typeof sid !== 'string' || typeof pwd !== 'string') return null;
      return { sub, acct, sid, pwd };
    } catch {
      return null;
    }
  }

  csrfFor(binding: string): string {
    return createHmac('sha256', this.csrfKey).update(binding).digest('base64url');
  }

  /** Constant-time check of a submitted CSRF token against its binding. */
  checkCsrf(binding: string, submitted: unknown): boolean {
    if (typeof submitted !== 'string' || submitted.length === 0 || submitted.length > 128) return false;
    const expected = Buffer.from(this.csrfFor(binding));
    const given = Buffer.from(submitted);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

export const sessionBinding = (sid: string): string => `session:${sid}`;
export const presessionBinding = (nonce: string): string => `pre:${nonce}`;

/** A short fingerprint of the stored password hash: changes when the password does. */
export function passwordFingerprint(passwordHash: string): string {
  return createHash('sha256').update(passwordHash).digest('base64url').slice(0, 16);
}

/**
 * DASHBOARD_SESSION_SECRET (the config schema checks its length), or outside production a random
 * one for this process with a warning: sessions then end when the process restarts and do not
 * work across replicas. Production refuses to start without one, or with a placeholder
 * (placeholder-secret.ts: the evaluation compose file's default, `aaaa…`, a repeated value).
 */
export function dashboardSessionSecret(config: Pick<Config, 'DASHBOARD_SESSION_SECRET' | 'NODE_ENV'>, logger: Logger): string {
  const given = config.DASHBOARD_SESSION_SECRET;
  if (given !== undefined && given !== '') {
    if (given.length < SECRET_MIN) throw new Error(`DASHBOARD_SESSION_SECRET must have at least ${SECRET_MIN} characters`);
    const placeholder = config.NODE_ENV === 'production' ? placeholderSecretReason(given) : undefined;
    // The reason names a rule, never the value.
    if (placeholder !== undefined)
      throw new Error(`DASHBOARD_SESSION_SECRET looks like a placeholder (${placeholder}): use openssl rand -base64 32`);
    return given;
  }
  if (config.NODE_ENV === 'production') throw new Error('DASHBOARD_SESSION_SECRET is required in production (32 characters or more)');
  logger.warn(
    'no DASHBOARD_SESSION_SECRET: using a random one for this process; dashboard sessions end at restart and do not work across replicas',
  );
  return randomBytes(32).toString('base64url');
}

/** `__Host-` cookies: Secure, Path=/, no Domain, HttpOnly, SameSite=Strict. */
export function hostCookie(name: string, value: string, o: { maxAgeS: number }): string {
  return serializeCookie(name, value, { maxAgeS: o.maxAgeS, path: '/', sameSite: 'Strict', secure: true });
}

export function clearCookie(name: string): string {
  return hostCookie(name, '', { maxAgeS: 0 });
}
