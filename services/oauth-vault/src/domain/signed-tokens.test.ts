import jwt from 'jsonwebtoken';
import { InvalidTokenError, TokenSigner } from './signed-tokens.js';

const secret = 'a'.repeat(40);
const claims = { pa: 'pa_1', acct: 'acct_1', env: 'live' as const, usr: 'u1', svc: 'github', scp: ['repo'], bnh: 'hash' };

describe('TokenSigner', () => {
  it('signs a short-lived state binding account, environment, user, service and scopes', () => {
    const s = new TokenSigner(secret);
    const { token, jti } = s.signState(claims, 600);
    const v = s.verifyState(token);
    expect(v).toMatchObject({ ...claims, jti });
    expect(v.exp - Math.floor(Date.now() / 1000)).toBeGreaterThan(590);
  });

  it('rejects expired, forged and cross-purpose tokens', () => {
    const s = new TokenSigner(secret);
    const expired = s.signState(claims, -1).token;
    expect(() => s.verifyState(expired)).toThrow(expect.objectContaining({ reason: 'expired' }));
    const other = new TokenSigner('b'.repeat(40)).signState(claims, 600).token;
    expect(() => s.verifyState(other)).toThrow(InvalidTokenError);
    const none = jwt.sign(claims, '', { algorithm: 'none' as never });
    expect(() => s.verifyState(none)).toThrow(InvalidTokenError);
    const settings = s.signSettings({ acct: 'a', env: 'test', usr: 'u' }, 60).token;
    expect(() => s.verifyState(settings)).toThrow(InvalidTokenError);
    expect(() => s.verifySettings(s.signState(claims, 60).token)).toThrow(InvalidTokenError);
  });

  it('binds the settings CSRF token to the link and the browser cookie', () => {
    const s = new TokenSigner(secret);
    const csrf = s.csrfFor('sl_1', 'nonce-1');
    expect(s.checkCsrf('sl_1', 'nonce-1', csrf)).toBe(true);
    expect(s.checkCsrf('sl_1', 'nonce-2', csrf)).toBe(false);
    expect(s.checkCsrf('sl_2', 'nonce-1', csrf)).toBe(false);
    expect(s.checkCsrf('sl_1', undefined, csrf)).toBe(false);
  });

  it('needs a secret of at least 32 characters', () => {
    expect(() => new TokenSigner('short')).toThrow(/32/);
  });
});
