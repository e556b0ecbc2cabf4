import { randomBytes } from 'node:crypto';
import { DecryptionError, KeyRing, KeyRingError } from './key-ring.js';

const key = () => randomBytes(32).toString('base64');

describe('KeyRing', () => {
  it('seals with AES-256-GCM under the current key id and opens it again', () => {
    const ring = KeyRing.parse(`a:${key()},b:${key()}`);
    const sealed = ring.encrypt('gho_secret-token', 'conn_1:access_token');
    expect(sealed).toMatch(/^v1\.a\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(sealed).not.toContain('secret');
    expect(ring.decrypt(sealed, 'conn_1:access_token')).toBe('gho_secret-token');
    expect(ring.encrypt('x', 'p')).not.toBe(ring.encrypt('x', 'p'));
  });

  it('decrypts values written under an older key after rotation, and writes with the new one', () => {
    const a = `a:${key()}`;
    const b = `b:${key()}`;
    const old = KeyRing.parse(a).encrypt('token', 'aad');
    const rotated = KeyRing.parse(`${b},${a}`);
    expect(rotated.currentKid).toBe('b');
    expect(rotated.decrypt(old, 'aad')).toBe('token');
    expect(KeyRing.kidOf(rotated.encrypt('token', 'aad'))).toBe('b');
    expect(() => KeyRing.parse(b).decrypt(old, 'aad')).toThrow(/not in the key ring/);
  });

  it('refuses a ciphertext moved to another place or tampered with', () => {
    const ring = KeyRing.parse(`a:${key()}`);
    const sealed = ring.encrypt('token', 'conn_1:access_token');
    expect(() => ring.decrypt(sealed, 'conn_2:access_token')).toThrow(DecryptionError);
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => ring.decrypt(parts.join('.'), 'conn_1:access_token')).toThrow(DecryptionError);
    expect(() => ring.decrypt('plain-token', 'x')).toThrow(DecryptionError);
  });

  it('rejects malformed key rings', () => {
    expect(() => KeyRing.parse('')).toThrow(KeyRingError);
    expect(() => KeyRing.parse('nokid')).toThrow(/kid1:base64key/);
    expect(() => KeyRing.parse(`a:${randomBytes(16).toString('base64')}`)).toThrow(/32 bytes/);
    expect(() => KeyRing.parse(`a:${key()},a:${key()}`)).toThrow(/twice/);
    expect(() => KeyRing.parse(`bad kid:${key()}`)).toThrow(/key id/);
    // The message names the setting the ring came from.
    expect(() => KeyRing.parse('', 'VAULT_KEYS')).toThrow('VAULT_KEYS has no key');
  });
});
