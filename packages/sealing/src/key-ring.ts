import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const KID = /^[A-Za-z0-9_-]{1,32}$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

/** A malformed key ring (configuration): the process prints the message and exits. */
export class KeyRingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRingError';
  }
}

export class DecryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecryptionError';
  }
}

/**
 * AES-256-GCM under a ring of keys with ids. The first key is current: every new write uses
 * it; any key of the ring still decrypts what it wrote, so a key is rotated by putting the new
 * one first, deploying, re-sealing what is stored (the vault's `reencrypt`, the dispatcher's
 * `secrets reseal`), and only then dropping the old one.
 *
 * A sealed value is `v1.<kid>.<iv>.<ciphertext>.<tag>` (base64url parts). The associated data
 * binds it to its place (e.g. connection id + field name): a ciphertext copied onto another
 * user's connection, or into another field, does not decrypt.
 */
export class KeyRing {
  private readonly keys: ReadonlyMap<string, Buffer>;
  readonly currentKid: string;

  /** `name` is the setting the keys come from (e.g. VAULT_KEYS), for the error messages. */
  constructor(entries: readonly (readonly [string, Buffer])[], name = 'the key ring') {
    const first = entries[0];
    if (!first) throw new KeyRingError(`${name} has no key`);
    const keys = new Map<string, Buffer>();
    for (const [kid, key] of entries) {
      if (!KID.test(kid)) throw new KeyRingError(`${name}: key id "${kid}" must match ${KID.source}`);
      if (key.length !== 32)
        throw new KeyRingError(`${name}: key "${kid}" must be 32 bytes (base64 of 32 random bytes), got ${key.length}`);
      if (keys.has(kid)) throw new KeyRingError(`${name}: key id "${kid}" appears twice`);
      keys.set(kid, key);
    }
    this.keys = keys;
    this.currentKid = first[0];
  }

  /** "kid1:base64key,kid2:base64key", the first current. */
  static parse(spec: string, name = 'the key ring'): KeyRing {
    const entries = spec
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((part): [string, Buffer] => {
        const i = part.indexOf(':');
        if (i <= 0) throw new KeyRingError(`${name} must look like "kid1:base64key,kid2:base64key"`);
        return [part.slice(0, i), Buffer.from(part.slice(i + 1), 'base64')];
      });
    return new KeyRing(entries, name);
  }

  /** A random single-key ring (development only: what it encrypts dies with the process). */
  static ephemeral(): KeyRing {
    return new KeyRing([['ephemeral', randomBytes(32)]]);
  }

  get kids(): string[] {
    return [...this.keys.keys()];
  }

  encrypt(plaintext: string, aad: string): string {
    const key = this.keys.get(this.currentKid) as Buffer;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [FORMAT, this.currentKid, iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(
      '.',
    );
  }

  decrypt(sealed: string, aad: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 5 || parts[0] !== FORMAT) throw new DecryptionError('not a sealed value');
    const [, kid, iv, ct, tag] = parts as [string, string, string, string, string];
    const key = this.keys.get(kid);
    if (!key) throw new DecryptionError(`key "${kid}" is not in the key ring`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new DecryptionError('sealed value does not authenticate (wrong key, place or tampered)');
    }
  }

  /** The key id a sealed value was written with. */
  static kidOf(sealed: string): string | undefined {
    const parts = sealed.split('.');
    return parts.length === 5 ? parts[1] : undefined;
  }
}
