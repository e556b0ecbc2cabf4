import type { Environment } from '@tes/contracts';
import type { Plan } from './plans.js';

/** A customer account: its plan decides its limits unless the operator overrides them. */
export interface Account {
  _id: string;
  name: string;
  plan: Plan;
  status: 'active' | 'disabled';
  /** Overrides of the plan's limits (enterprise). */
  limits?: { requests_per_minute?: number; concurrent_tasks?: number };
  created_at: Date;
}

/** An API key as stored: its SHA-256, never the key itself (shown once at creation). */
export interface ApiKey {
  _id: string;
  account_id: string;
  environment: Environment;
  hash: string;
  prefix: string;
  last4: string;
  /** The owner's label for it; absent on keys made without one. */
  name?: string;
  status: 'active' | 'revoked';
  created_at: Date;
  revoked_at?: Date;
  /** Set when the key was rolled with a delay: it works until then and is refused (401) from then on. */
  expires_at?: Date;
}

/** The accounts and keys the dashboard reads and changes (AccountRepository implements it). */
export interface AccountStore {
  account(id: string): Promise<Account | null>;
  /** Every key of the account, active or revoked. */
  keysOf(accountId: string): Promise<ApiKey[]>;
  keyById(keyId: string): Promise<ApiKey | null>;
  activeKey(keyId: string, accountId: string): Promise<ApiKey | null>;
  insertKey(key: ApiKey): Promise<void>;
  /** Revokes the account's key if it is active (and announces it); false when there is no such active key. */
  revokeKey(keyId: string, accountId: string, now?: Date): Promise<boolean>;
  /** Sets when the account's active key stops working (and announces it); false when there is no such active key. */
  expireKey(keyId: string, accountId: string, at: Date): Promise<boolean>;
  /** When each of these keys last authenticated a request, as far as it was recorded (to the minute). */
  lastUsedOf(keyIds: readonly string[]): Promise<Map<string, Date>>;
}
