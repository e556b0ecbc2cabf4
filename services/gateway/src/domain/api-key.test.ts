import { isRollExpiry, keyNameProblem, keyUsable, ROLL_EXPIRIES } from './api-key.js';

describe('API key rules', () => {
  it('accepts exactly the roll expiries now, 1h, 24h and 7d', () => {
    expect(Object.keys(ROLL_EXPIRIES)).toEqual(['now', '1h', '24h', '7d']);
    expect(['now', '1h', '24h', '7d'].every(isRollExpiry)).toBe(true);
    expect(['', '2h', 'toString', '__proto__', '7D'].some(isRollExpiry)).toBe(false);
    expect(ROLL_EXPIRIES['7d']).toBe(7 * 24 * 3600 * 1000);
  });

  it('uses a key while active and before its expiry, never once revoked or past it', () => {
    const at = new Date(10_000);
    expect(keyUsable({ status: 'active' }, 10_000)).toBe(true);
    expect(keyUsable({ status: 'active', expires_at: at }, 9_999)).toBe(true);
    expect(keyUsable({ status: 'active', expires_at: at }, 10_000)).toBe(false);
    expect(keyUsable({ status: 'revoked', expires_at: at }, 0)).toBe(false);
    expect(keyUsable({ status: 'revoked' }, 0)).toBe(false);
  });

  it('takes names of 1 to 64 characters without control characters', () => {
    expect(keyNameProblem('billing worker')).toBeNull();
    expect(keyNameProblem('  é'.padEnd(66, 'x'))).toBeNull(); // trimmed: 64
    expect(keyNameProblem('   ')).toMatch(/empty/);
    expect(keyNameProblem('x'.repeat(65))).toMatch(/at most 64/);
    expect(keyNameProblem('a\nb')).toMatch(/control/);
  });
});
