import type { Environment } from '@tes/contracts';
import type { EndpointDoc, EndpointRepository } from '../store/endpoint.repository.js';
import type { SecretDoc, SecretRepository } from '../store/secret.repository.js';
import { Limiter } from '../store/batch.js';

interface Entry<T> {
  value: Promise<T>;
  expiresAt: number;
}

/**
 * Endpoints and signing secrets for the deliveries, read from the database at most once per
 * `ttlMs` per account environment instead of twice per delivery. A change made through this
 * process (the dashboard's `webhook.set` and `webhook.rotate_secret`, which the dispatcher
 * handles itself) clears the entry at once; a change made elsewhere (the operator CLI, another
 * replica) is seen within `ttlMs` (default 1 s). A rotation loses nothing meanwhile: the
 * previous secret keeps signing for the grace period. Concurrent misses share one read.
 */
export class ConfigCache {
  private readonly endpoints = new Map<string, Entry<EndpointDoc | null>>();
  private readonly secrets = new Map<string, Entry<SecretDoc[]>>();
  /** Reads at once: entries loaded together expire together, and their reloads must not crowd the database. */
  private readonly reads = new Limiter(4);

  constructor(
    private readonly repos: { endpoints: EndpointRepository; secrets: SecretRepository },
    private readonly ttlMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {
    repos.endpoints.onChange((a, e) => this.invalidate(a, e));
    repos.secrets.onChange((a, e) => this.invalidate(a, e));
  }

  endpoint(accountId: string, environment: Environment): Promise<EndpointDoc | null> {
    return this.cached(this.endpoints, accountId, environment, () =>
      this.reads.run(() => this.repos.endpoints.get(accountId, environment)),
    );
  }

  /** The newest two versions, newest first (enough to sign during a grace period). */
  secretVersions(accountId: string, environment: Environment): Promise<SecretDoc[]> {
    return this.cached(this.secrets, accountId, environment, () =>
      this.reads.run(() => this.repos.secrets.latest(accountId, environment, 2)),
    );
  }

  invalidate(accountId: string, environment: Environment): void {
    // A read already under way for this key is no longer kept when it completes (see cached).
    const key = `${accountId}:${environment}`;
    this.endpoints.delete(key);
    this.secrets.delete(key);
  }

  private cached<T>(map: Map<string, Entry<T>>, accountId: string, environment: Environment, load: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return load();
    const key = `${accountId}:${environment}`;
    const now = this.clock();
    const hit = map.get(key);
    if (hit && now < hit.expiresAt) return hit.value;
    const value = load();
    // Kept for 75-100 % of the TTL (from the start of the read), so entries loaded together do not all expire together.
    map.set(key, { value, expiresAt: now + this.ttlMs * (0.75 + Math.random() * 0.25) });
    // A failed read is not kept.
    void value.catch(() => {
      if (map.get(key)?.value === value) map.delete(key);
    });
    if (map.size > 10_000) this.evict(map, now);
    return value;
  }

  private evict<T>(map: Map<string, Entry<T>>, now: number): void {
    for (const [k, e] of map) if (now >= e.expiresAt) map.delete(k);
  }
}
