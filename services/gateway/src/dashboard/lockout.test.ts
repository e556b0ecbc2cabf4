import { FAILURE_WINDOW_MS, MAX_ADDRESS_FAILURES, MAX_FAILURES, failureDelayMs, lockState, signInGate, waitText } from './lockout.js';

describe('sign-in lock-out', () => {
  const now = new Date('2026-01-01T12:00:00.000Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);

  it('does not lock below 5 failures in 15 minutes', () => {
    expect(lockState([], now)).toEqual({ locked: false, retryAt: null });
    expect(lockState([ago(1000), ago(2000), ago(3000), ago(4000)], now).locked).toBe(false);
  });

  it('locks at 5 failures until the oldest of them leaves the window', () => {
    const recent = [ago(1000), ago(60_000), ago(120_000), ago(180_000), ago(600_000)];
    const s = lockState(recent, now);
    expect(s.locked).toBe(true);
    expect(s.retryAt?.toISOString()).toBe(new Date(ago(600_000).getTime() + FAILURE_WINDOW_MS).toISOString());
    expect(waitText(s.retryAt!, now)).toBe('5 minutes');
  });

  it('forgets failures older than the window', () => {
    const recent = [ago(1000), ago(2000), ago(3000), ago(4000), ago(FAILURE_WINDOW_MS + 1)];
    expect(lockState(recent, now).locked).toBe(false);
    expect(MAX_FAILURES).toBe(5);
  });

  it('delays growing refusals: none for the first, then doubling to at most 4 s', () => {
    expect([1, 2, 3, 4, 5, 6, 9].map(failureDelayMs)).toEqual([0, 250, 500, 1000, 2000, 4000, 4000]);
  });

  it('locks the email for one address at 5 failures, and an address for every email at 20', () => {
    const times = (n: number) => Array.from({ length: n }, (_, i) => ago((i + 1) * 1000));
    expect(signInGate({ pair: times(4), address: times(19), emailCount: 30 }, now).lock).toBeNull();
    expect(signInGate({ pair: times(5), address: times(5), emailCount: 5 }, now).lock?.scope).toBe('email');
    expect(signInGate({ pair: [], address: times(MAX_ADDRESS_FAILURES), emailCount: 0 }, now).lock?.scope).toBe('address');
  });

  it('slows every attempt for an email that failed from anywhere, but never refuses it', () => {
    const fresh = signInGate({ pair: [], address: [], emailCount: 1_000 }, now);
    expect(fresh).toEqual({ lock: null, delayMs: 4000 });
    expect(signInGate({ pair: [], address: [], emailCount: 0 }, now).delayMs).toBe(0);
  });

  it('says how long to wait', () => {
    expect(waitText(new Date(now.getTime() + 30_000), now)).toBe('less than a minute');
    expect(waitText(new Date(now.getTime() + 60_000), now)).toBe('1 minute');
    expect(waitText(new Date(now.getTime() + 14 * 60_000 + 1), now)).toBe('15 minutes');
  });
});
