import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz';

/**
 * Prefixed, time-ordered ids: 9 characters of milliseconds then 16 random ones,
 * so ids sort by creation time and never collide in practice.
 */
export function newId(prefix: string, now = Date.now()): string {
  let t = now;
  let time = '';
  for (let i = 0; i < 9; i++) {
    time = ALPHABET[t % ALPHABET.length] + time;
    t = Math.floor(t / ALPHABET.length);
  }
  const bytes = randomBytes(16);
  let rand = '';
  for (const b of bytes) rand += ALPHABET[b % ALPHABET.length];
  return `${prefix}_${time}${rand}`;
}

/** ISO 8601, UTC, `Z` suffix, milliseconds. */
export function isoNow(now = new Date()): string {
  return now.toISOString();
}
