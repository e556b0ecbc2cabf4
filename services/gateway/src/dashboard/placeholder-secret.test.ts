import { randomBytes } from 'node:crypto';
import { memoryLogger } from '@tes/testing';
import { placeholderSecretReason } from './placeholder-secret.js';
import { dashboardSessionSecret } from './session.js';

describe('placeholder session secrets', () => {
  it('flags placeholder words, too few distinct characters and repeated units', () => {
    expect(placeholderSecretReason('tes-dev-only-dashboard-session-secret-change-me')).toMatch(/contains/);
    expect(placeholderSecretReason('CHANGE_ME_openssl_rand_base64_32')).toMatch(/"change"/);
    expect(placeholderSecretReason('x'.repeat(40))).toMatch(/distinct/);
    expect(placeholderSecretReason('0101010101010101010101010101010101')).toMatch(/distinct/);
    expect(placeholderSecretReason('abcdefghijklmnopabcdefghijklmnop')).toBe('it repeats a shorter value');
    expect(placeholderSecretReason('Qw3rTy9!Zx7#Lm2$Qw3rTy9!Zx7#Lm2$Qw3rTy9!')).toBe('it repeats a shorter value');
  });

  it('accepts random base64 and hex values', () => {
    for (let i = 0; i < 200; i++) {
      expect(placeholderSecretReason(randomBytes(32).toString('base64'))).toBeUndefined();
      expect(placeholderSecretReason(randomBytes(32).toString('hex'))).toBeUndefined();
    }
  });

  it('refuses a placeholder in production only, without echoing it', () => {
    const { logger } = memoryLogger();
    const evaluationDefault = 'tes-dev-only-dashboard-session-secret-change-me';
    expect(() => dashboardSessionSecret({ NODE_ENV: 'production', DASHBOARD_SESSION_SECRET: evaluationDefault }, logger)).toThrow(
      /looks like a placeholder \(it contains "change"\)/,
    );
    try {
      dashboardSessionSecret({ NODE_ENV: 'production', DASHBOARD_SESSION_SECRET: 'z'.repeat(32) }, logger);
      throw new Error('not refused');
    } catch (err) {
      expect((err as Error).message).toMatch(/placeholder/);
      expect((err as Error).message).not.toContain('zzzz');
    }
    // Development keeps accepting it (tests and local runs use readable secrets).
    expect(dashboardSessionSecret({ NODE_ENV: 'development', DASHBOARD_SESSION_SECRET: evaluationDefault }, logger)).toBe(
      evaluationDefault,
    );
    const random = randomBytes(32).toString('base64');
    expect(dashboardSessionSecret({ NODE_ENV: 'production', DASHBOARD_SESSION_SECRET: random }, logger)).toBe(random);
  });
});
