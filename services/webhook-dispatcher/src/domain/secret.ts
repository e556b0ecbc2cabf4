import { randomBytes } from 'node:crypto';
import type { Environment } from '@tes/contracts';

export const SECRET_PREFIX = 'whsec_';

/**
 * `whsec_` + 32 random bytes in standard base64 (44 characters), the Standard Webhooks
 * format: stock verification libraries accept the secret as it is.
 */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

export function isSecret(value: string): boolean {
  return /^whsec_[A-Za-z0-9+/]{43}=$/.test(value);
}

/** One version of an environment's secret; a rotation adds the next version. */
export interface SecretVersion {
  version: number;
  secret: string;
  created_at: Date;
  /** Until when the version before this one still signs (the rotation's grace period). */
  previous_valid_until: Date | null;
}

/**
 * The secrets that sign a delivery now, current first: the newest version, plus the one
 * before it while the newest version's grace period runs. `versions` is newest first.
 */
export function signingSecrets(versions: readonly SecretVersion[], now = new Date()): string[] {
  const [current, previous] = versions;
  if (!current) return [];
  const out = [current.secret];
  if (previous && current.previous_valid_until && current.previous_valid_until.getTime() > now.getTime()) out.push(previous.secret);
  return out;
}

/** A version as stored for one account environment: `_id` = `${account_id}:${environment}:${version}`. */
export interface SecretDoc extends SecretVersion {
  _id: string;
  account_id: string;
  environment: Environment;
}
