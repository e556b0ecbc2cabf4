import jwt from 'jsonwebtoken';
import { memoryLogger } from '@tes/testing';
import {
  PRESESSION_COOKIE,
  SESSION_COOKIE,
  SessionKeys,
  clearCookie,
  hostCookie,
  passwordFingerprint,
  presessionBinding,
  sessionBinding,
  dashboardSessionSecret,
} from './session.js';

const SECRET = 'a-dashboard-session-secret-of-32+chars';

describe('dashboard sessions (signed JWT)', () => {
  const keys = new SessionKeys(SECRET);
  const claims = { sub: 'own_1', acct: 'acct_1', pwd: passwordFingerprint('scrypt$15$8$1$salt$hash') };

  it('issues an HS256 JWT that verifies back to its claims with a fresh session id', () => {
    const a = keys.issue(claims);
    const b = keys.issue(claims);
    expect(a.sid).not.toBe(b.sid);
    expect(keys.verify(a.token)).toEqual({ ...claims, sid: a.sid });
    const header = JSON.parse(Buffer.from(a.token.split('.')[0] ?? '', 'base64url').toString()) as { alg: string };
    expect(header.alg).toBe('HS256');
    const payload = jwt.decode(a.token) as Record<string, number>;
    expect((payload['exp'] ?? 0) - (payload['iat'] ?? 0)).toBe(8 * 3600);
  });

  it('refuses tokens that are expired, tampered, unsigned, signed with another secret or for another audience', () => {
    expect(keys.verify(keys.issue(claims, -10).token)).toBeNull();
    const { token } = keys.issue(claims);
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...(jwt.decode(token) as object), acct: 'acct_other' })).toString('base64url');
    expect(keys.verify(`${h}.${forged}.${s}`)).toBeNull();
    expect(keys.verify(`${h}.${p}.`)).toBeNull();
    const none = jwt.sign({ acct: 'acct_1', sid: 'x', pwd: 'y' }, '', {
      algorithm: 'none',
      subject: 'own_1',
      issuer: 'tes-gateway',
      audience: 'tes-dashboard',
    });
    expect(keys.verify(none)).toBeNull();
    expect(new SessionKeys(`${SECRET}-other`).verify(token)).toBeNull();
    const raw = jwt.sign({ acct: 'acct_1', sid: 'x', pwd: 'y' }, keys.sessionKey, {
      subject: 'own_1',
      issuer: 'tes-gateway',
      audience: 'api',
    });
    expect(keys.verify(raw)).toBeNull();
    expect(keys.verify(undefined)).toBeNull();
    expect(keys.verify('not a jwt')).toBeNull();
  });

  it('derives separate keys for sessions and CSRF from the secret', () => {
    expect(keys.sessionKey.equals(keys.csrfKey)).toBe(false);
    expect(keys.sessionKey.toString('utf8')).not.toContain(SECRET);
    expect(() => new SessionKeys('too short')).toThrow(/at least 32/);
  });

  it('changes the password fingerprint with the password hash', () => {
    expect(passwordFingerprint('scrypt$a')).not.toBe(passwordFingerprint('scrypt$b'));
    expect(passwordFingerprint('scrypt$a')).toHaveLength(16);
  });
});

describe('CSRF tokens', () => {
  const keys = new SessionKeys(SECRET);

  it('are bound to the session: valid for it, refused for another session, a sign-in nonce or nothing', () => {
    const token = keys.csrfFor(sessionBinding('sid-A'));
    expect(keys.checkCsrf(sessionBinding('sid-A'), token)).toBe(true);
    expect(keys.checkCsrf(sessionBinding('sid-B'), token)).toBe(false);
    expect(keys.checkCsrf(presessionBinding('sid-A'), token)).toBe(false);
    expect(keys.checkCsrf(sessionBinding('sid-A'), '')).toBe(false);
    expect(keys.checkCsrf(sessionBinding('sid-A'), undefined)).toBe(false);
    expect(keys.checkCsrf(sessionBinding('sid-A'), ['x'])).toBe(false);
    expect(keys.checkCsrf(sessionBinding('sid-A'), `${token}x`)).toBe(false);
    expect(keys.checkCsrf(sessionBinding('sid-A'), 'x'.repeat(500))).toBe(false);
  });

  it('cannot be made without the secret', () => {
    expect(new SessionKeys(`${SECRET}!`).csrfFor(sessionBinding('sid-A'))).not.toBe(keys.csrfFor(sessionBinding('sid-A')));
  });
});

describe('cookies and the secret', () => {
  it('sets __Host- cookies HttpOnly, Secure, SameSite=Strict on Path=/', () => {
    const c = hostCookie(SESSION_COOKIE, 'a.b.c', { maxAgeS: 60 });
    expect(c).toBe('__Host-tes_session=a.b.c; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Strict');
    expect(clearCookie(PRESESSION_COOKIE)).toMatch(/^__Host-tes_signin=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  });

  it('takes DASHBOARD_SESSION_SECRET, generates one (with a warning) in development, and insists in production', () => {
    const { logger, lines } = memoryLogger();
    const development = { NODE_ENV: 'development' };
    expect(dashboardSessionSecret({ ...development, DASHBOARD_SESSION_SECRET: SECRET }, logger)).toBe(SECRET);
    expect(lines()).toHaveLength(0);
    const generated = dashboardSessionSecret(development, logger);
    expect(generated.length).toBeGreaterThanOrEqual(32);
    expect(dashboardSessionSecret(development, logger)).not.toBe(generated);
    expect(lines().join('\n')).toMatch(/no DASHBOARD_SESSION_SECRET/);
    expect(() => dashboardSessionSecret({ NODE_ENV: 'production' }, logger)).toThrow(/required in production/);
    expect(() => dashboardSessionSecret({ ...development, DASHBOARD_SESSION_SECRET: 'short' }, logger)).toThrow(/at least 32/);
  });
});
