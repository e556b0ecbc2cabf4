import type { Account } from './account.js';
import { PLANS } from './plans.js';

/**
 * Fixed one-minute windows (spec 8.2 "requests per minute"). Window n covers
 * [n·60 s, (n+1)·60 s) of Unix time, so every replica computes the same window
 * from its clock and `X-RateLimit-Reset` is the window's end in Unix seconds.
 */
export const WINDOW_MS = 60_000;

export function windowOf(nowMs: number): number {
  return Math.floor(nowMs / WINDOW_MS);
}

/** Unix seconds at which the window ends and a fresh budget starts. */
export function resetOf(window: number): number {
  return ((window + 1) * WINDOW_MS) / 1000;
}

/** Whole seconds to wait until the window ends, at least 1 (for `Retry-After`). */
export function retryAfterSeconds(nowMs: number, window = windowOf(nowMs)): number {
  return Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - nowMs) / 1000));
}

/** The account's requests per minute: the operator's override, else its plan's. */
export function requestsPerMinute(account: Pick<Account, 'plan' | 'limits'>): number {
  return account.limits?.requests_per_minute ?? (PLANS[account.plan] ?? PLANS.prototyping).requests_per_minute;
}

/** The account's concurrent-task limit: the operator's override, else its plan's. */
export function concurrentTasks(account: Pick<Account, 'plan' | 'limits'>): number {
  return account.limits?.concurrent_tasks ?? (PLANS[account.plan] ?? PLANS.prototyping).concurrent_tasks;
}

/**
 * Finds the highest claimed ticket from `lo` (known claimed, or 0) up to `cap`
 * with exponential then binary probing. Claimed tickets of a window are always
 * a dense prefix 1..m (a ticket is inserted only right after one seen claimed),
 * so `exists` is monotone and the search is exact for the moment it probes.
 */
export async function highestClaimed(lo: number, cap: number, exists: (n: number) => Promise<boolean>): Promise<number> {
  let known = lo;
  let step = 1;
  let missing = cap + 1;
  // Gallop: known+1, known+2, known+4, ... until a gap or the cap.
  for (;;) {
    const probe = Math.min(known + step, cap);
    if (probe <= known) return known; // known === cap
    if (await exists(probe)) {
      known = probe;
      if (probe === cap) return cap;
      step *= 2;
    } else {
      missing = probe;
      break;
    }
  }
  // Binary search in (known, missing).
  while (missing - known > 1) {
    const mid = Math.floor((known + missing) / 2);
    if (await exists(mid)) known = mid;
    else missing = mid;
  }
  return known;
}
