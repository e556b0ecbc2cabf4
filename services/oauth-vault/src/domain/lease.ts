/**
 * Single-use markers (an OAuth state, a consent link, a sweep slot): inserts into the claims
 * collection that exactly one replica wins (store/lease.repository.ts, whose write leases on
 * connections are the store's own business).
 */
export interface LeaseStore {
  /** True for the one caller that inserts `id` first. */
  once(id: string, kind: string, expiresAt: Date): Promise<boolean>;
  exists(id: string): Promise<boolean>;
  /** Deletes entries that expired more than `graceMs` ago. */
  purgeExpired(graceMs: number): Promise<number>;
}
