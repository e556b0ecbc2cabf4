import { DEFAULT_RETRY, backoffDelay, parseRetryAfter, resolveRetry, retryAfterDelay, sleep } from './retry.js';

describe('backoff', () => {
  it('doubles from initialDelayMs up to maxDelayMs, jittered within [d*(1-jitter), d]', () => {
    const o = resolveRetry({ initialDelayMs: 100, maxDelayMs: 1000, jitter: 0.5 });
    const low = () => 0;
    const high = () => 1;
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, o, high))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([0, 1, 2, 3, 4].map((n) => backoffDelay(n, o, low))).toEqual([50, 100, 200, 400, 500]);
    const none = resolveRetry({ initialDelayMs: 100, jitter: 0 });
    expect(backoffDelay(1, none, Math.random)).toBe(200);
  });

  it('waits at least the Retry-After, spread over jitter × initialDelayMs so refused clients do not return together', () => {
    expect(retryAfterDelay(1000, DEFAULT_RETRY, () => 0)).toBe(1000);
    expect(retryAfterDelay(1000, DEFAULT_RETRY, () => 1)).toBe(1250);
    expect(retryAfterDelay(1000, DEFAULT_RETRY, () => 0.5)).toBe(1125);
    expect(retryAfterDelay(1000, resolveRetry({ jitter: 0 }), () => 1)).toBe(1000);
  });

  it('has documented defaults and refuses nonsense', () => {
    expect(DEFAULT_RETRY).toEqual({ initialDelayMs: 500, maxDelayMs: 8000, multiplier: 2, jitter: 0.5, maxRetryAfterMs: 60000 });
    expect(() => resolveRetry({ jitter: 2 })).toThrow(TypeError);
    expect(() => resolveRetry({ initialDelayMs: -1 })).toThrow(TypeError);
    expect(() => resolveRetry({ maxDelayMs: Number.NaN })).toThrow(TypeError);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, in milliseconds', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('1', now)).toBe(1000);
    expect(parseRetryAfter(' 30 ', now)).toBe(30000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});

describe('sleep', () => {
  it('waits, and rejects with the reason when aborted', async () => {
    const t0 = Date.now();
    await sleep(30);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    const ctl = new AbortController();
    const p = sleep(10_000, ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    await expect(sleep(1, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
