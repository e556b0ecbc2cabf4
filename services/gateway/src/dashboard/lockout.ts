/**
 * Failed sign-ins are recorded as inserts and counted per email over a sliding window.
 * From the second failure on, the refusal is delayed (growing); at MAX_FAILURES failures in
 * the window the email is locked: no password is checked until the oldest of those failures
 * leaves the window.
 */
export const FAILURE_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES = 5;
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 4000;

export interface LockState {
  locked: boolean;
  /** When a locked email can try again. */
  retryAt: Date | null;
}

/** `recent` = times of the failures within the window, newest first (at most MAX_FAILURES needed). */
export function lockState(recent: readonly Date[], now = new Date()): LockState {
  const inWindow = recent.filter((t) => now.getTime() - t.getTime() < FAILURE_WINDOW_MS);
  if (inWindow.length < MAX_FAILURES) return { locked: false, retryAt: null };
  // Locked until the MAX_FAILURES-th newest failure ages out of the window.
  const pivot = [...inWindow].sort((a, b) => b.getTime() - a.getTime())[MAX_FAILURES - 1] as Date;
  return { locked: true, retryAt: new Date(pivot.getTime() + FAILURE_WINDOW_MS) };
}

/** Delay before answering the n-th failure in the window (n ≥ 1): 0, 250 ms, 500 ms, 1 s, … at most 4 s. */
export function failureDelayMs(n: number): number {
  if (n <= 1) return 0;
  return Math.min(BASE_DELAY_MS * 2 ** (n - 2), MAX_DELAY_MS);
}

/** "3 minutes" / "1 minute" / "less than a minute". */
export function waitText(retryAt: Date, now = new Date()): string {
  const minutes = Math.ceil((retryAt.getTime() - now.getTime()) / 60_000);
  if (minutes <= 1) return retryAt.getTime() - now.getTime() < 60_000 ? 'less than a minute' : '1 minute';
  return `${minutes} minutes`;
}
