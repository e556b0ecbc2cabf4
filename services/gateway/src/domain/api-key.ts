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
