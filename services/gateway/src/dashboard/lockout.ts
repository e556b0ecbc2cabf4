/**
 * Sign-in lock-out, decided from the failed sign-ins recorded (inserts) over a sliding window.
 *
 * - Per email **and** client address: at MAX_FAILURES failures in the window, that address is
 *   locked for that email until the oldest of those failures leaves the window. Failures from an
 *   attacker's address never lock the owner out of their own address.
 * - Per address, any email: at MAX_ADDRESS_FAILURES the address is locked for every email
 *   (one address trying many emails: password spraying).
 * - Per email, any address: a back-off. Every attempt for an email that failed recently waits
 *   before its password is checked, growing with those failures (at most MAX_DELAY_MS), success
 *   or not, so the wait tells nothing. It slows a flood from many addresses and never blocks an
 *   address that has not failed: the owner waits a few seconds at worst.
 */
export const FAILURE_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES = 5;
export const MAX_ADDRESS_FAILURES = 20;
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 4000;
/** Email-wide failures beyond this many do not lengthen the delay (it is at its maximum). */
export const DELAY_SATURATES_AT = 6;

export interface LockState {
  locked: boolean;
  /** When a locked email can try again. */
  retryAt: Date | null;
}

/** `recent` = times of the failures within the window, newest first (at most `max` needed). */
export function lockState(recent: readonly Date[], now = new Date(), max = MAX_FAILURES): LockState {
  const inWindow = recent.filter((t) => now.getTime() - t.getTime() < FAILURE_WINDOW_MS);
  if (inWindow.length < max) return { locked: false, retryAt: null };
  // Locked until the max-th newest failure ages out of the window.
  const pivot = [...inWindow].sort((a, b) => b.getTime() - a.getTime())[max - 1] as Date;
  return { locked: true, retryAt: new Date(pivot.getTime() + FAILURE_WINDOW_MS) };
}

/** What the sign-in store knows of recent failures (each list newest first, within the window). */
export interface RecentFailures {
  /** This email from this address (at most MAX_FAILURES). */
  pair: readonly Date[];
  /** This address, any email (at most MAX_ADDRESS_FAILURES). */
  address: readonly Date[];
  /** This email, any address (counted up to DELAY_SATURATES_AT). */
  emailCount: number;
}

export interface SignInGate {
  /** Why the attempt is refused before its password is checked, and until when; null to go on. */
  lock: { scope: 'email' | 'address'; retryAt: Date } | null;
  /** How long the attempt waits before its password is checked. */
  delayMs: number;
}

export function signInGate(r: RecentFailures, now = new Date()): SignInGate {
  const byAddress = lockState(r.address, now, MAX_ADDRESS_FAILURES);
  const byPair = lockState(r.pair, now, MAX_FAILURES);
  const lock =
    byPair.locked && byPair.retryAt
      ? { scope: 'email' as const, retryAt: byPair.retryAt }
      : byAddress.locked && byAddress.retryAt
        ? { scope: 'address' as const, retryAt: byAddress.retryAt }
        : null;
  return { lock, delayMs: failureDelayMs(r.emailCount + 1) };
}

/** Delay for an attempt after n - 1 failures (n ≥ 1): 0, 250 ms, 500 ms, 1 s, … at most 4 s. */
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
