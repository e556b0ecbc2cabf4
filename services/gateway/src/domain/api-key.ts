import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '@tes/contracts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PATTERN = /^pk_(test|live)_[0-9A-Za-z]{32}$/;

/** `pk_test_` / `pk_live_` + 32 base62 characters (~190 bits). Shown once, stored hashed. */
export function generateApiKey(environment: Environment): string {
  let body = '';
  while (body.length < 32) {
    for (const b of randomBytes(48)) {
      if (b < 248 && body.length < 32) body += BASE62[b % 62];
    }
  }
  return `pk_${environment}_${body}`;
}

/** Keys are high-entropy, so a fast hash is the right one (no password stretching needed). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function environmentOf(key: string): Environment {
  return key.startsWith('pk_live_') ? 'live' : 'test';
}

/** How long a rolled key keeps working beside its successor (the dashboard's and the CLI's choices). */
export const ROLL_EXPIRIES = { now: 0, '1h': 3_600_000, '24h': 86_400_000, '7d': 604_800_000 } as const;
export type RollExpiry = keyof typeof ROLL_EXPIRIES;

export function isRollExpiry(value: string): value is RollExpiry {
  return Object.hasOwn(ROLL_EXPIRIES, value);
}

/** Whether a stored key may authenticate a request at `nowMs`: active and, if it was rolled with a delay, not past it. */
export function keyUsable(key: { status: string; expires_at?: Date | undefined }, nowMs: number): boolean {
  return key.status === 'active' && (key.expires_at === undefined || new Date(key.expires_at).getTime() > nowMs);
}

const KEY_NAME_MAX = 64;

/** A key's name: trimmed, 1 to 64 characters, no control characters. Null when acceptable. */
export function keyNameProblem(name: string): string | null {
  const n = name.trim();
  if (n.length === 0) return 'the name must not be empty';
  if ([...n].length > KEY_NAME_MAX) return `the name must be at most ${KEY_NAME_MAX} characters`;
  if ([...n].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127)) return 'the name must not contain control characters';
  return null;
}
