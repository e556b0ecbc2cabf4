import type { Environment } from '@tes/contracts';
import type { EndpointDoc } from '../domain/endpoint.js';
import type { DeliveryConfig } from '../domain/ports.js';
import type { SecretDoc } from '../domain/secret.js';
import { Limiter } from './batch.js';
import type { EndpointRepository } from './endpoint.repository.js';
import type { SecretRepository } from './secret.repository.js';

interface Entry<T> {
  value: Promise<T>;
  expiresAt: number;
  /** The change subscription's attachment when the read started; undefined without one. */
  epoch: number | undefined;
}

/**
 * Endpoints and signing secrets for the deliveries, read from the database at most once per
 * TTL per account environment instead of twice per delivery. A change made through this process
 * (the dashboard's `webhook.set` and `webhook.rotate_secret`, which the dispatcher handles
 * itself) clears the entry at once. A change made elsewhere (the operator CLI, another replica)
 * arrives as `webhook.config_changed` on this replica's own queue (`followChanges`) and clears it
 * too; entries then live `followedTtlMs` (default 60 s, a safety net for a lost message). While
 * that queue is not attached, or if it was attached anew since an entry was read (messages
 * published meanwhile are lost), entries live `ttlMs` only (default 1 s). A rotation loses
 * nothing meanwhile: the previous secret keeps signing for the grace period. Concurrent misses
 * share one read.
 */
export class ConfigCache implements DeliveryConfig {
  private readonly endpoints = new Map<string, Entry<EndpointDoc | null>>();
  private readonly secrets = new Map<string, Entry<SecretDoc[]>>();
  /** Reads at once: entries loaded together expire together, and their reloads must not crowd the database. */
  private readonly reads = new Limiter(4);
  private subscription: () => number | undefined = () => undefined;
  private followedTtlMs = 0;

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

  /**
   * `subscription`: the id of the open attachment of this replica's `webhook.config_changed`
   * consumer (which calls `invalidate`), undefined while there is none.
   */
  followChanges(subscription: () => number | undefined, followedTtlMs: number): void {
    this.subscription = subscription;
    this.followedTtlMs = followedTtlMs;
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
    const epoch = this.subscription();
    const hit = map.get(key);
    if (hit && now < hit.expiresAt && hit.epoch === epoch) return hit.value;
    const value = load();
    const ttl = epoch === undefined ? this.ttlMs : Math.max(this.ttlMs, this.followedTtlMs);
    // Kept for 75-100 % of the TTL (from the start of the read), so entries loaded together do not all expire together.
    map.set(key, { value, expiresAt: now + ttl * (0.75 + Math.random() * 0.25), epoch });
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
