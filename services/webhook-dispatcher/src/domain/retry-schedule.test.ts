import { afterFailure, parseRetrySchedule, SPEC_SCHEDULE_MS } from './retry-schedule.js';
import { configSchema } from '../config.js';

describe('retry schedule', () => {
  it('defaults to the spec: immediate, 1 min, 5 min, 30 min, 2 h, then undeliverable', () => {
    const policy = parseRetrySchedule(configSchema.properties.WEBHOOK_RETRY_SCHEDULE_MS.default);
    expect(policy.delaysMs).toEqual([...SPEC_SCHEDULE_MS]);
    expect(policy.maxAttempts).toBe(5);
    const t0 = new Date('2026-01-01T00:00:00Z');
    const delays = [1, 2, 3, 4].map((p) => {
      const next = afterFailure(policy, p, t0);
      return next.kind === 'retry' ? next.at.getTime() - t0.getTime() : -1;
    });
    expect(delays).toEqual([60_000, 300_000, 1_800_000, 7_200_000]);
    expect(afterFailure(policy, 5, t0)).toEqual({ kind: 'undeliverable' });
  });

  it('accepts a compressed schedule and rejects anything but milliseconds', () => {
    expect(parseRetrySchedule(' 200, 200,200 ,200').delaysMs).toEqual([200, 200, 200, 200]);
    expect(parseRetrySchedule('0').maxAttempts).toBe(2);
    expect(() => parseRetrySchedule('1m,5m')).toThrow('not a number');
    expect(() => parseRetrySchedule('100,,200')).toThrow();
  });
});
