import type { Account, ApiKey } from './account.js';

export interface Credentials {
  key: ApiKey | null;
  account: Account | null;
}

export interface CredentialsSource {
  keyAndAccount(hash: string): Promise<Credentials>;
}

interface Entry {
  value: Promise<Credentials>;
  expiresAt: number;
  /** The change subscription's attachment when the read started. */
  epoch: number;
  /** Known once the read has found the key. */
  accountId?: string;
}

const MAX_ENTRIES = 10_000;

/**
 * The API key and its account for each request, read from the database once per `ttlMs` instead
 * of twice per request, without weakening revocation. Every change that can refuse a request (a key
 * revoked, an account disabled, enabled or given new limits) is announced by whoever stores it
 * (this replica's dashboard, another replica, the operator CLI) as `gateway.credentials_changed`
 * on each replica's own queue, and `invalidate` drops what this replica holds of that account,
 * including reads still under way. So entries are served only:
 *  - while that queue is attached, and only if it has stayed attached since the entry was read
 *    (what is published while it is not attached is lost); otherwise every request reads;
 *  - for keys that exist (an unknown key is read every time, so a new key works at once);
 *  - for at most `ttlMs` (AUTH_CACHE_MS, default 10 s), the safety net should an announcement be
 *    lost (a replica whose broker connection died without its noticing yet).
 * Concurrent misses of one key share one read.
 */
export class CredentialsCache implements CredentialsSource {
  private readonly entries = new Map<string, Entry>();
  private readonly hashesOf = new Map<string, Set<string>>();
  private subscription: () => number | undefined = () => undefined;

  constructor(
    private readonly source: CredentialsSource,
    private readonly ttlMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** `subscription`: the id of the open attachment of this replica's change consumer, undefined while there is none. */
  followChanges(subscription: () => number | undefined): void {
    this.subscription = subscription;
  }

  keyAndAccount(hash: string): Promise<Credentials> {
    const epoch = this.subscription();
    if (this.ttlMs <= 0 || epoch === undefined) return this.source.keyAndAccount(hash);
    const now = this.clock();
    const hit = this.entries.get(hash);
    if (hit && now < hit.expiresAt && hit.epoch === epoch) return hit.value;
    if (hit) this.drop(hash);
    const value = this.source.keyAndAccount(hash);
    // Kept for 75-100 % of the TTL, so entries loaded together do not all expire together.
    const entry: Entry = { value, expiresAt: now + this.ttlMs * (0.75 + Math.random() * 0.25), epoch };
    this.entries.set(hash, entry);
    value.then(
      ({ key }) => {
        if (this.entries.get(hash) !== entry) return; // invalidated (or replaced) meanwhile
        if (!key) {
          this.entries.delete(hash);
          return;
        }
        entry.accountId = key.account_id;
        let set = this.hashesOf.get(key.account_id);
        if (!set) this.hashesOf.set(key.account_id, (set = new Set()));
        set.add(hash);
      },
      () => {
        if (this.entries.get(hash) === entry) this.entries.delete(hash);
      },
    );
    if (this.entries.size > MAX_ENTRIES) this.evict(now);
    return value;
  }

  /** Drops the account's keys and every read still under way (its account is not known yet). */
  invalidate(accountId: string): void {
    for (const hash of [...(this.hashesOf.get(accountId) ?? [])]) this.drop(hash);
    for (const [hash, e] of this.entries) if (e.accountId === undefined) this.entries.delete(hash);
  }

  private drop(hash: string): void {
    const e = this.entries.get(hash);
    if (!e) return;
    this.entries.delete(hash);
    if (e.accountId === undefined) return;
    const set = this.hashesOf.get(e.accountId);
    set?.delete(hash);
    if (set?.size === 0) this.hashesOf.delete(e.accountId);
  }

  private evict(now: number): void {
    for (const [hash, e] of this.entries) if (now >= e.expiresAt) this.drop(hash);
    // All still fresh: the oldest inserted go first.
    for (const hash of this.entries.keys()) {
      if (this.entries.size <= MAX_ENTRIES) break;
      this.drop(hash);
    }
  }
}
