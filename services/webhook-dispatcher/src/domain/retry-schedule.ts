/**
 * The delivery schedule (spec 6.3): attempt 1 at once, then one attempt after each delay;
 * after the last one fails the event is undeliverable. Default delays: 1 min, 5 min, 30 min, 2 h.
 */
export interface RetryPolicy {
  /** Delay before attempt k+2 after attempt k+1 failed. */
  readonly delaysMs: readonly number[];
  /** delaysMs.length + 1. */
  readonly maxAttempts: number;
}

export const SPEC_SCHEDULE_MS = [60_000, 300_000, 1_800_000, 7_200_000] as const;

/** "60000,300000,1800000,7200000" → policy. Throws on anything but non-negative integers. */
export function parseRetrySchedule(value: string): RetryPolicy {
  const parts = value.split(',').map((p) => p.trim());
  const delaysMs = parts.map((p) => {
    if (!/^\d+$/.test(p)) throw new Error(`retry schedule: "${p}" is not a number of milliseconds`);
    return Number(p);
  });
  return { delaysMs, maxAttempts: delaysMs.length + 1 };
}

export type AfterFailure = { kind: 'retry'; at: Date } | { kind: 'undeliverable' };

/**
 * What follows a failed attempt. `position` is the attempt's place in the current schedule
 * (1 for the first attempt, or the first after an operator's redeliver).
 */
export function afterFailure(policy: RetryPolicy, position: number, failedAt: Date): AfterFailure {
  if (position >= policy.maxAttempts) return { kind: 'undeliverable' };
  const delay = policy.delaysMs[position - 1] ?? 0;
  return { kind: 'retry', at: new Date(failedAt.getTime() + delay) };
}
