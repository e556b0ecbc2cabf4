/** Backoff between attempts (retries of one call, polls of `waitForTask`). */
export interface RetryOptions {
  /** Delay before the first retry. Default 500 ms. */
  initialDelayMs?: number;
  /** Upper bound of a computed delay. Default 8,000 ms. */
  maxDelayMs?: number;
  /** Growth per retry. Default 2. */
  multiplier?: number;
  /**
   * Fraction of each delay that is random (0 = none, 1 = "full jitter"). Default 0.5: a delay
   * d is between d/2 and d, so many clients failing at once do not come back at once.
   */
  jitter?: number;
  /**
   * A Retry-After longer than this is not waited for: the call fails at once with the error
   * (its `retryAfterSeconds` says when to come back). Default 60,000 ms.
   */
  maxRetryAfterMs?: number;
}

export type ResolvedRetryOptions = Required<RetryOptions>;

export const DEFAULT_RETRY: ResolvedRetryOptions = {
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  multiplier: 2,
  jitter: 0.5,
  maxRetryAfterMs: 60_000,
};

export function resolveRetry(o: RetryOptions | undefined): ResolvedRetryOptions {
  const r = { ...DEFAULT_RETRY };
  for (const k of Object.keys(r) as (keyof ResolvedRetryOptions)[]) {
    const v = o?.[k];
    if (v !== undefined) {
      if (!Number.isFinite(v) || v < 0) throw new TypeError(`retry.${k} must be a number >= 0`);
      r[k] = v;
    }
  }
  if (r.jitter > 1) throw new TypeError('retry.jitter must be between 0 and 1');
  return r;
}

/** Delay before retry number `retry` (0 = the first retry): exponential, capped, jittered. */
export function backoffDelay(retry: number, o: ResolvedRetryOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(o.maxDelayMs, o.initialDelayMs * o.multiplier ** retry);
  return Math.round(ceiling * (1 - o.jitter) + ceiling * o.jitter * random());
}

/**
 * Delay before a retry the answer's Retry-After asked for: that long, plus up to
 * `jitter × initialDelayMs` at random (250 ms by default), so clients refused together
 * (a shed create, a rate window ending) do not all come back in the same millisecond.
 */
export function retryAfterDelay(retryAfterMs: number, o: ResolvedRetryOptions, random: () => number = Math.random): number {
  return retryAfterMs + Math.round(o.jitter * o.initialDelayMs * random());
}

/**
 * Retry-After in milliseconds: delta-seconds (`"2"`) or an HTTP date. Undefined when absent
 * or unreadable; never negative.
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  if (!/^[A-Za-z]{3}, /.test(v)) return undefined; // IMF-fixdate: "Thu, 01 Jan 2026 00:00:05 GMT"
  const date = Date.parse(v);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(ms, 2_147_483_647), // the longest a timer takes
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
