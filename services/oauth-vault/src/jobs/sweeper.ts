import type { ConnectionDoc } from '../domain/connection.js';
import { ProviderCallError } from '../oauth-providers/oauth-client.js';
import { openAccessToken } from '../domain/connection-docs.js';
import type { VaultDeps } from '../domain/deps.js';
import { markBroken, refreshConnection } from '../domain/refresh-connection.js';

export interface SweeperOptions {
  intervalMs: number;
  /** Connections handled per kind and tick. */
  batch?: number;
  /** Outbox events younger than this are left to the request that wrote them. */
  outboxMinAgeMs?: number;
  /** Delay before a refresh that failed transiently is tried again. */
  retryMs?: number;
}

const PURGE_EVERY_MS = 60_000;

/**
 * The background loop of every replica. Delays live in the database (`next_refresh_at`,
 * `next_probe_at`), never in timers, so any replica picks up any due work and a restart loses
 * none; refreshes are single-flight per connection (the generation lease), probes take a
 * one-time claim per (connection, due time). Each tick:
 *  - refreshes tokens whose `next_refresh_at` has come;
 *  - probes connections whose `next_probe_at` has come (a cheap authenticated call, or a
 *    refresh when the provider has no probe URL) and marks dead ones broken;
 *  - relays unsent connection.changed events;
 *  - deletes expired claims, pending authorizations and old outbox entries.
 */
export class Sweeper {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private lastPurge = 0;

  constructor(
    private readonly deps: VaultDeps,
    private readonly options: SweeperOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    this.wake?.();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        await this.tick();
      } catch (err) {
        this.deps.logger.warn('sweep failed', { error: String(err) });
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, this.options.intervalMs);
      });
    }
  }

  /** One pass (tests call it directly). */
  async tick(): Promise<void> {
    const now = new Date();
    const batch = this.options.batch ?? 50;
    for (const doc of await this.deps.connections.dueForRefresh(now, batch)) await this.refreshDue(doc);
    for (const doc of await this.deps.connections.dueForProbe(now, batch)) await this.probe(doc);
    await this.deps.announcer.relay(this.options.outboxMinAgeMs ?? 2000);
    if (Date.now() - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = Date.now();
      await this.deps.leases.purgeExpired(10 * 60_000);
      await this.deps.pending.purgeExpired(new Date());
    }
  }

  private async refreshDue(doc: ConnectionDoc): Promise<void> {
    // One replica per due connection and lease period; the others move on instead of queueing behind it.
    const period = Math.floor(Date.now() / this.deps.settings.leaseTtlMs);
    if (
      !(await this.deps.leases.once(
        `sweep:${doc._id}:g${doc.generation}:${period}`,
        'sweep',
        new Date(Date.now() + 2 * this.deps.settings.leaseTtlMs),
      ))
    )
      return;
    try {
      await refreshConnection(doc, this.deps, 'sweep');
    } catch (err) {
      if (err instanceof ProviderCallError) await this.postpone(doc, 'next_refresh_at');
      else this.deps.logger.warn('sweep refresh failed', { connection_id: doc._id, error: String(err) });
    }
  }

  /**
   * Health probe: does the provider still accept the connection? Catches grants revoked at the
   * provider (the user removed the app there) before a task needs them.
   */
  private async probe(doc: ConnectionDoc): Promise<void> {
    const due = doc.next_probe_at;
    if (!due) return;
    const slot = await this.deps.leases.once(`probe:${doc._id}:${due.getTime()}`, 'probe', new Date(Date.now() + 10 * 60_000));
    if (!slot) return;
    const provider = await this.deps.providers.resolve(doc.service, doc);
    if (!provider?.configured) return;
    const log = this.deps.logger.child({ connection_id: doc._id, service: doc.service });
    try {
      let verdict: 'ok' | 'unauthorized' | 'unknown' = 'unknown';
      if (provider.probeUrl && doc.access_token_enc) verdict = await this.deps.oauth.probe(provider, openAccessToken(doc, this.deps.ring));
      if (verdict === 'ok') {
        await this.reschedule(doc);
        return;
      }
      // Rejected, or no probe URL: a refresh is the probe (it fails for a revoked grant).
      if (doc.refresh_token_enc) {
        const after = await refreshConnection(doc, this.deps, 'probe');
        if (after.status === 'connected') await this.reschedule(after);
        return;
      }
      if (verdict === 'unauthorized') {
        await markBroken(doc, this.deps, 'probe_rejected');
        log.warn('health probe: token rejected, connection broken');
        return;
      }
      await this.reschedule(doc);
    } catch (err) {
      log.warn('health probe inconclusive', { error: String(err) });
      await this.postpone(doc, 'next_probe_at');
    }
  }

  private async reschedule(seen: ConnectionDoc): Promise<void> {
    const interval = this.deps.settings.probeIntervalMs;
    await this.deps.connections.mutate(seen._id, 'probe', {
      needed: (d) => d !== null && d.status === 'connected' && d.next_probe_at !== null && d.next_probe_at.getTime() <= Date.now(),
      apply: async (d) =>
        d
          ? {
              ...d,
              last_probe_at: new Date(),
              next_probe_at: interval > 0 ? new Date(Date.now() + interval) : null,
              updated_at: new Date(),
            }
          : null,
    });
  }

  private async postpone(seen: ConnectionDoc, field: 'next_refresh_at' | 'next_probe_at'): Promise<void> {
    const retryMs = this.options.retryMs ?? 60_000;
    await this.deps.connections
      .mutate(seen._id, 'postpone', {
        needed: (d) => d !== null && d.status === 'connected' && d.generation === seen.generation,
        apply: async (d) => (d ? { ...d, [field]: new Date(Date.now() + retryMs), updated_at: new Date() } : null),
      })
      .catch((err: unknown) => this.deps.logger.warn('could not postpone', { connection_id: seen._id, error: String(err) }));
  }
}
