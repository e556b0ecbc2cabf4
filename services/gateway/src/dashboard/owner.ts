/** An account owner: signs in to the dashboard. Created by the operator CLI (`owners create`). */
export interface Owner {
  _id: string;
  account_id: string;
  /** Trimmed and lower-cased; unique. */
  email: string;
  /** `scrypt$…` (see password.ts). */
  password_hash: string;
  created_at: Date;
}

export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
