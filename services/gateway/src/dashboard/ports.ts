import type { Environment, TaskStatus } from '@tes/contracts';
import type { RecentFailures } from './lockout.js';
import type { Owner } from './owner.js';

/**
 * What the dashboard reads and writes of its own collections, as interfaces: the repositories in
 * ./store implement them (the accounts and tasks it shares with the API: ../domain).
 */
export interface OwnerStore {
  byEmail(email: string): Promise<Owner | null>;
  byId(id: string): Promise<Owner | null>;
  /** The failures within the window that decide an attempt of `email` from `address` (see lockout.ts). */
  recentFailures(email: string, address: string, now?: Date): Promise<RecentFailures>;
  recordFailure(email: string, address: string, now?: Date): Promise<void>;
  /** Forgets the email's failures from that address only. */
  clearFailures(email: string, address: string): Promise<void>;
}

/** Server-side sessions: the cookie names one; it is valid while stored and unexpired. */
export interface SessionStore {
  create(sid: string, ownerId: string, accountId: string, ttlS: number, now?: Date): Promise<void>;
  isActive(sid: string, ownerId: string, now?: Date): Promise<boolean>;
  revoke(sid: string): Promise<void>;
}

/** The usage page's counts and the connections page's recent end users. */
export interface UsageStats {
  requestsThisMinute(accountId: string, nowMs?: number): Promise<number>;
  taskCounts(accountId: string, statuses: readonly TaskStatus[]): Promise<Record<string, number>>;
  recentUserIds(accountId: string, environment: Environment, max?: number): Promise<string[]>;
}
