/**
 * Open-model load: requests leave at their scheduled times whatever the server does,
 * and each latency is measured from the scheduled send time, so queueing delay
 * (coordinated omission) is not hidden.
 */
export interface OpenLoadResult {
  latenciesMs: number[];
  errors: number;
  /** How long the failed requests took to fail (after the warm-up, like latenciesMs). */
  errorLatenciesMs: number[];
  sent: number;
  statuses: Record<string, number>;
}

export async function openLoad(options: {
  ratePerSec: number;
  durationMs: number;
  warmupMs: number;
  /** Resolves with a status label when the request is done. */
  fire: (i: number, scheduledAt: number) => Promise<string>;
}): Promise<OpenLoadResult> {
  const interval = 1000 / options.ratePerSec;
  const total = Math.floor(((options.warmupMs + options.durationMs) / 1000) * options.ratePerSec);
  const start = performance.now() + 20;
  const latencies: number[] = [];
  const errorLatencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const inflight: Promise<void>[] = [];
  let i = 0;
  while (i < total) {
    const now = performance.now();
    while (i < total && start + i * interval <= now) {
      const scheduled = start + i * interval;
      const n = i++;
      inflight.push(
        options.fire(n, scheduled).then(
          (status) => {
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (scheduled - start >= options.warmupMs) latencies.push(performance.now() - scheduled);
          },
          (err: unknown) => {
            errors++;
            if (scheduled - start >= options.warmupMs) errorLatencies.push(performance.now() - scheduled);
            // Why it failed (a timeout, a reset connection, a status the caller refused) is counted too.
            const label = `error: ${(err instanceof Error ? err.message : String(err)).slice(0, 60)}`;
            statuses[label] = (statuses[label] ?? 0) + 1;
          },
        ),
      );
    }
    const next = start + i * interval - performance.now();
    await new Promise((r) => setTimeout(r, Math.max(0, Math.min(next, 5))));
  }
  await Promise.all(inflight);
  return { latenciesMs: latencies, errors, errorLatenciesMs: errorLatencies, sent: total, statuses };
}

/** Closed loop: `concurrency` workers back to back for `durationMs`; returns operations per second. */
export async function closedLoop(concurrency: number, durationMs: number, op: () => Promise<unknown>): Promise<number> {
  const end = performance.now() + durationMs;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await op();
        done++;
      }
    }),
  );
  return done / (durationMs / 1000);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, idx)] ?? NaN;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

export function summarize(latencies: number[]): LatencySummary {
  const s = [...latencies].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    count: s.length,
    p50: round(percentile(s, 50)),
    p99: round(percentile(s, 99)),
    p999: round(percentile(s, 99.9)),
    max: round(s[s.length - 1] ?? NaN),
  };
}

export function median(values: number[]): number {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** The median of each field over several runs. */
export function medianSummary(runs: LatencySummary[]): LatencySummary {
  // The median of an even number of runs is a mean: rounded like summarize's figures.
  const m = (xs: number[]) => Math.round(median(xs) * 100) / 100;
  return {
    count: m(runs.map((r) => r.count)),
    p50: m(runs.map((r) => r.p50)),
    p99: m(runs.map((r) => r.p99)),
    p999: m(runs.map((r) => r.p999)),
    max: m(runs.map((r) => r.max)),
  };
}
