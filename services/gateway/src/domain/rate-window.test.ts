import { concurrentTasks, highestClaimed, requestsPerMinute, resetOf, retryAfterSeconds, windowOf } from './rate-window.js';

describe('rate windows', () => {
  const minute = Date.UTC(2026, 0, 1, 12, 30, 0);

  it('puts every instant of one UTC minute in the same window and the next minute in the next', () => {
    expect(windowOf(minute)).toBe(windowOf(minute + 59_999));
    expect(windowOf(minute + 60_000)).toBe(windowOf(minute) + 1);
    expect(windowOf(minute - 1)).toBe(windowOf(minute) - 1);
  });

  it('resets at the end of the window, in Unix seconds', () => {
    expect(resetOf(windowOf(minute))).toBe(minute / 1000 + 60);
    expect(resetOf(windowOf(minute + 59_999))).toBe(minute / 1000 + 60);
  });

  it('asks to retry after the whole seconds left in the window, at least 1', () => {
    expect(retryAfterSeconds(minute)).toBe(60);
    expect(retryAfterSeconds(minute + 100)).toBe(60);
    expect(retryAfterSeconds(minute + 1000)).toBe(59);
    expect(retryAfterSeconds(minute + 59_001)).toBe(1);
    expect(retryAfterSeconds(minute + 59_999)).toBe(1);
  });

  it('takes the plan limits unless the operator set the account limits', () => {
    expect(requestsPerMinute({ plan: 'prototyping' })).toBe(100);
    expect(requestsPerMinute({ plan: 'production' })).toBe(1000);
    expect(requestsPerMinute({ plan: 'enterprise', limits: { requests_per_minute: 25_000 } })).toBe(25_000);
    expect(concurrentTasks({ plan: 'prototyping' })).toBe(10);
    expect(concurrentTasks({ plan: 'production' })).toBe(100);
    expect(concurrentTasks({ plan: 'enterprise', limits: { concurrent_tasks: 7 } })).toBe(7);
    expect(requestsPerMinute({ plan: 'prototyping', limits: { concurrent_tasks: 3 } })).toBe(100);
  });
});

describe('highestClaimed', () => {
  const dense = (m: number) => {
    const probes: number[] = [];
    const exists = async (n: number) => {
      probes.push(n);
      return n <= m;
    };
    return { exists, probes };
  };

  it.each([
    [0, 0, 100],
    [0, 1, 100],
    [0, 37, 100],
    [5, 64, 100],
    [0, 99, 100],
    [0, 100, 100],
    [10, 10, 100],
    [0, 999, 1000],
  ])('from %i finds the end %i of a dense prefix capped at %i', async (lo, m, cap) => {
    const { exists, probes } = dense(m);
    await expect(highestClaimed(lo, cap, exists)).resolves.toBe(Math.min(m, cap));
    // Logarithmic: never more than 2·log2(cap) + 2 probes.
    expect(probes.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(cap)) + 2);
  });

  it('returns the cap at once when the known ticket is the cap', async () => {
    const { exists, probes } = dense(100);
    await expect(highestClaimed(100, 100, exists)).resolves.toBe(100);
    expect(probes).toEqual([]);
  });
});
