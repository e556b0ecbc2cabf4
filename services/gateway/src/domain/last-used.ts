/** At most one write per key per this long, per process. */
export const LAST_USED_INTERVAL_MS = 60_000;
const MAX_KEYS = 10_000;

/**
 * Records when a key last authenticated a request without a write per request: each process
 * writes a key's time at most once per `intervalMs` (the store's write is conditional as well,
 * so replicas together change it about once per interval). The time shown is therefore up to a
 * minute behind. A failed write is reported and not retried before the interval.
 */
export class LastUsedThrottle {
  /** Key id → when this process last wrote it; insertion order is the eviction order. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly write: (keyId: string, at: Date) => Promise<void>,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs = LAST_USED_INTERVAL_MS,
    private readonly clock: () => number = () => Date.now(),
  ) {}

  touch(keyId: string): void {
    const now = this.clock();
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.intervalMs) return;
    this.written.delete(keyId);
    this.written.set(keyId, now);
    if (this.written.size > MAX_KEYS) this.written.delete(this.written.keys().next().value as string);
    this.write(keyId, new Date(now)).catch(this.onError);
  }
}
