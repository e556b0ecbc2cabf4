import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './password.js';

const CHEAP = { log2N: 10, r: 8, p: 1 };

describe('owner passwords (scrypt)', () => {
  it('stores scrypt parameters, a random salt and the hash; never the password', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(stored).not.toContain('correct');
    // Same password, new salt: another record.
    expect(await hashPassword('correct horse battery staple', CHEAP)).not.toBe(await hashPassword('correct horse battery staple', CHEAP));
  });

  it('accepts the right password and refuses others', async () => {
    const stored = await hashPassword('s3cret-passw0rd', CHEAP);
    await expect(verifyPassword('s3cret-passw0rd', stored)).resolves.toBe(true);
    await expect(verifyPassword('s3cret-passw0rD', stored)).resolves.toBe(false);
    await expect(verifyPassword('', stored)).resolves.toBe(false);
    await expect(verifyPassword('s3cret-passw0rd ', stored)).resolves.toBe(false);
  });

  it('verifies with the cost recorded in the hash (older or newer parameters keep working)', async () => {
    const stored = await hashPassword('another password', { log2N: 11, r: 4, p: 2 });
    expect(stored.startsWith('scrypt$11$4$2$')).toBe(true);
    await expect(verifyPassword('another password', stored)).resolves.toBe(true);
  });

  it('treats Unicode forms alike (NFC), so the same password typed on another keyboard matches', async () => {
    const stored = await hashPassword('caf\u00e9-au-lait!', CHEAP);
    await expect(verifyPassword('cafe\u0301-au-lait!', stored)).resolves.toBe(true);
  });

  it('refuses malformed, tampered or absurd-cost records without throwing', async () => {
    const stored = await hashPassword('s3cret-passw0rd', CHEAP);
    const parts = stored.split('$');
    await expect(verifyPassword('s3cret-passw0rd', 'plain')).resolves.toBe(false);
    await expect(verifyPassword('s3cret-passw0rd', `bcrypt$${parts.slice(1).join('$')}`)).resolves.toBe(false);
    await expect(verifyPassword('s3cret-passw0rd', [...parts.slice(0, 5), 'A'.repeat(43)].join('$'))).resolves.toBe(false);
    await expect(verifyPassword('s3cret-passw0rd', ['scrypt', '30', ...parts.slice(2)].join('$'))).resolves.toBe(false);
  });

  it('has a decoy hash for unknown emails that no password matches', async () => {
    const decoy = await decoyHash();
    expect(decoy).toMatch(/^scrypt\$15\$/);
    expect(await decoyHash()).toBe(decoy);
    await expect(verifyPassword('', decoy)).resolves.toBe(false);
  });

  it('asks for 10 to 1024 characters', () => {
    expect(passwordProblem('short')).toMatch(/at least 10/);
    expect(passwordProblem('x'.repeat(10))).toBeNull();
    expect(passwordProblem('x'.repeat(1025))).toMatch(/at most 1024/);
  });
});
