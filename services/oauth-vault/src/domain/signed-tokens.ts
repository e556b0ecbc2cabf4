import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Environment } from '@tes/contracts';
import { VaultConfigError } from './secrets.js';

const ISSUER = 'tes-oauth-vault';
const STATE_AUDIENCE = 'oauth-state';
const SETTINGS_AUDIENCE = 'oauth-settings';
const CONSENT_AUDIENCE = 'oauth-consent';

/** What an OAuth `state` binds: who connects which service with which scopes, and the PKCE verifier's record. */
export interface StateClaims {
  /** Pending authorization (the `auth_url`) this consent completes. */
  pa: string;
  acct: string;
  env: Environment;
  usr: string;
  svc: string;
  /** Requested scopes: the union of granted and needed (incremental authorization). */
  scp: string[];
  /** SHA-256 of the browser nonce set as a cookie by /oauth/start: the callback must come from that browser. */
  bnh: string;
}

export interface VerifiedState extends StateClaims {
  /** Single-use id; also the id of the attempt record holding the PKCE verifier. */
  jti: string;
  exp: number;
}

export interface SettingsClaims {
  acct: string;
  env: Environment;
  usr: string;
}

export interface VerifiedSettings extends SettingsClaims {
  jti: string;
  exp: number;
}

/** What a consent link (the `auth_url`) stands for: a pending authorization of one user of one account. */
export interface ConsentClaims {
  pa: string;
  acct: string;
  env: Environment;
  usr: string;
  svc: string;
}

export interface VerifiedConsent extends ConsentClaims {
  /** Single-use id of the link (`cl_…`). */
  jti: string;
  exp: number;
}

export class InvalidTokenError extends Error {
  constructor(
    readonly reason: 'expired' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'InvalidTokenError';
  }
}

/**
 * Short-lived signed tokens (HS256 JWTs through jsonwebtoken): the OAuth `state`, the
 * settings-page link and the consent link. Each kind has its own key, derived from VAULT_STATE_SECRET with HKDF, and
 * its own audience, so one can never pass for the other.
 */
export class TokenSigner {
  private readonly stateKey: Buffer;
  private readonly settingsKey: Buffer;
  private readonly csrfKey: Buffer;
  private readonly consentKey: Buffer;

  constructor(secret: string) {
    if (Buffer.byteLength(secret) < 32) throw new VaultConfigError('VAULT_STATE_SECRET must be at least 32 characters');
    const derive = (info: string) => Buffer.from(hkdfSync('sha256', secret, 'tes-oauth-vault', info, 32));
    this.stateKey = derive('oauth-state');
    this.settingsKey = derive('settings-link');
    this.csrfKey = derive('settings-csrf');
    this.consentKey = derive('consent-link');
  }

  static ephemeralSecret(): string {
    return randomBytes(32).toString('base64url');
  }

  signState(claims: StateClaims, ttlSeconds: number): { token: string; jti: string } {
    const { token, jti } = this.sign(claims, this.stateKey, STATE_AUDIENCE, `st_${randomBytes(16).toString('base64url')}`, ttlSeconds);
    return { token, jti };
  }

  verifyState(token: string): VerifiedState {
    const payload = this.verify(token, this.stateKey, STATE_AUDIENCE);
    const p = payload as Partial<VerifiedState>;
    if (
      typeof p.pa !== 'string' ||
      typeof p.acct !== 'string' ||
      (p.env !== 'test' && p.env !== 'live') ||
      typeof p.usr !== 'string' ||
      typeof p.svc !== 'string' ||
      !Array.isArray(p.scp) ||
      typeof p.bnh !== 'string' ||
      typeof p.jti !== 'string' ||
      typeof p.exp !== 'number'
    ) {
      throw new InvalidTokenError('invalid', 'state is missing claims');
    }
    return p as VerifiedState;
  }

  signSettings(claims: SettingsClaims, ttlSeconds: number): { token: string; expiresAt: Date } {
    const { token, expiresAt } = this.sign(
      claims,
      this.settingsKey,
      SETTINGS_AUDIENCE,
      `sl_${randomBytes(12).toString('base64url')}`,
      ttlSeconds,
    );
    return { token, expiresAt };
  }

  verifySettings(token: string): VerifiedSettings {
    const p = this.verify(token, this.settingsKey, SETTINGS_AUDIENCE) as Partial<VerifiedSettings>;
    if (
      typeof p.acct !== 'string' ||
      (p.env !== 'test' && p.env !== 'live') ||
      typeof p.usr !== 'string' ||
      typeof p.jti !== 'string' ||
      typeof p.exp !== 'number'
    ) {
      throw new InvalidTokenError('invalid', 'settings link is missing claims');
    }
    return p as VerifiedSettings;
  }

  signConsent(claims: ConsentClaims, ttlSeconds: number): { token: string; jti: string; expiresAt: Date } {
    return this.sign(claims, this.consentKey, CONSENT_AUDIENCE, `cl_${randomBytes(12).toString('base64url')}`, ttlSeconds);
  }

  /** `ignoreExpiration` only to renew a link (the gateway asks for a fresh one under the account's key). */
  verifyConsent(token: string, o: { ignoreExpiration?: boolean } = {}): VerifiedConsent {
    const p = this.verify(token, this.consentKey, CONSENT_AUDIENCE, o.ignoreExpiration) as Partial<VerifiedConsent>;
    if (
      typeof p.pa !== 'string' ||
      typeof p.acct !== 'string' ||
      (p.env !== 'test' && p.env !== 'live') ||
      typeof p.usr !== 'string' ||
      typeof p.svc !== 'string' ||
      typeof p.jti !== 'string' ||
      typeof p.exp !== 'number'
    ) {
      throw new InvalidTokenError('invalid', 'consent link is missing claims');
    }
    return p as VerifiedConsent;
  }

  /** CSRF token of a page's form (settings, consent): bound to the link (jti) and to the browser's cookie nonce. */
  csrfFor(jti: string, cookieNonce: string): string {
    return createHmac('sha256', this.csrfKey).update(`${jti}.${cookieNonce}`).digest('base64url');
  }

  checkCsrf(jti: string, cookieNonce: string | undefined, given: string | undefined): boolean {
    if (!cookieNonce || !given) return false;
    return safeEqual(this.csrfFor(jti, cookieNonce), given);
  }

  /** One signed link or state: HS256 under its own key and audience, with its id and expiry. */
  private sign(
    claims: object,
    key: Buffer,
    audience: string,
    jti: string,
    ttlSeconds: number,
  ): { token: string; jti: string; expiresAt: Date } {
    const token = jwt.sign(claims, key, { algorithm: 'HS256', expiresIn: ttlSeconds, issuer: ISSUER, audience, jwtid: jti });
    const { exp } = jwt.decode(token) as { exp: number };
    return { token, jti, expiresAt: new Date(exp * 1000) };
  }

  private verify(token: string, key: Buffer, audience: string, ignoreExpiration = false): jwt.JwtPayload {
    try {
      const payload = jwt.verify(token, key, { algorithms: ['HS256'], issuer: ISSUER, audience, ignoreExpiration });
      if (typeof payload === 'string') throw new InvalidTokenError('invalid', 'unexpected token payload');
      return payload;
    } catch (err) {
      if (err instanceof InvalidTokenError) throw err;
      if (err instanceof jwt.TokenExpiredError) throw new InvalidTokenError('expired', 'token expired');
      throw new InvalidTokenError('invalid', 'token signature or claims are invalid');
    }
  }
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** An id or token as logs may show it: enough to correlate, not enough to use. */
export function shortId(value: string): string {
  return value.length <= 10 ? value : `${value.slice(0, 10)}…`;
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
