import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Owner passwords: scrypt (node:crypto) with a random 16-byte salt, stored as
 * `scrypt$<log2 N>$<r>$<p>$<salt base64url>$<hash base64url>`, so the cost can be raised
 * later without invalidating stored hashes. Compared in constant time.
 */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 1024;

const DEFAULT_COST = { log2N: 15, r: 8, p: 1 } as const; // 32 MiB, about 0.1 s on one core
const KEY_LEN = 32;

function derive(password: string, salt: Buffer, o: { log2N: number; r: number; p: number }): Promise<Buffer> {
  const N = 2 ** o.log2N;
  const options: ScryptOptions = { N, r: o.r, p: o.p, maxmem: 256 * N * o.r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LEN, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Why a password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  const n = [...password].length;
  if (n < PASSWORD_MIN) return `the password must have at least ${PASSWORD_MIN} characters`;
  if (n > PASSWORD_MAX) return `the password must have at most ${PASSWORD_MAX} characters`;
  return null;
}

export async function hashPassword(password: string, cost: { log2N: number; r: number; p: number } = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.log2N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const FORMAT = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{16,})$/;

/** True when `password` matches `stored`; false for a wrong password or a malformed record. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = FORMAT.exec(stored);
  if (!m) return false;
  const [log2N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (log2N < 10 || log2N > 20 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const expected = Buffer.from(m[5] ?? '', 'base64url');
  if (password.length > PASSWORD_MAX * 4) return false;
  const actual = await derive(password, Buffer.from(m[4] ?? '', 'base64url'), { log2N, r, p });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash of a random password with the default cost: checked when the email is unknown, so an
 * unknown email takes as long to refuse as a wrong password (no account enumeration by timing).
 */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(18).toString('base64url'));
  return decoy;
}
