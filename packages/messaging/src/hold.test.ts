import { HELD_SINCE_HEADER, HOLD_COUNT_HEADER, holdDecision, holdHeaders, holdQueueOptions, resolveHoldOptions } from './hold.js';

const options = resolveHoldOptions({ delayMs: 1000, maxHolds: 3, maxAgeMs: 60_000 });
const NOW = 1_800_000_000_000;

describe('holding a message this version cannot read', () => {
  it('holds a message seen for the first time, from now', () => {
    expect(holdDecision({}, options, NOW)).toEqual({ holds: 0, since: NOW, expired: false });
  });

  it('counts the holds and keeps the first hold time from the headers of the last hold', () => {
    const headers = { [HOLD_COUNT_HEADER]: 2, [HELD_SINCE_HEADER]: NOW - 5000 };
    expect(holdDecision(headers, options, NOW)).toEqual({ holds: 2, since: NOW - 5000, expired: false });
  });

  it('is past its bounds after maxHolds holds, or maxAgeMs after its first hold', () => {
    expect(holdDecision({ [HOLD_COUNT_HEADER]: 3, [HELD_SINCE_HEADER]: NOW }, options, NOW).expired).toBe(true);
    expect(holdDecision({ [HOLD_COUNT_HEADER]: 1, [HELD_SINCE_HEADER]: NOW - 60_000 }, options, NOW).expired).toBe(true);
    expect(holdDecision({ [HOLD_COUNT_HEADER]: 1, [HELD_SINCE_HEADER]: NOW - 59_999 }, options, NOW).expired).toBe(false);
  });

  it('reads headers it did not write (garbage, negative, strings) as a first hold, never as past its bounds', () => {
    expect(holdDecision({ [HOLD_COUNT_HEADER]: 'x', [HELD_SINCE_HEADER]: -5 }, options, NOW)).toEqual({
      holds: 0,
      since: NOW,
      expired: false,
    });
    expect(holdDecision({ [HOLD_COUNT_HEADER]: '2' }, options, NOW).holds).toBe(2);
  });

  it('writes the next count and the first hold time, keeps the other headers and drops the broker dead-letter history', () => {
    const headers = {
      'x-reply-deadline': 123,
      'x-death': [{ queue: 'q.hold', reason: 'expired', count: 1 }],
      'x-first-death-queue': 'q.hold',
      'x-last-death-reason': 'expired',
      [HOLD_COUNT_HEADER]: 1,
    };
    expect(holdHeaders(headers, { holds: 1, since: NOW - 10, expired: false })).toEqual({
      'x-reply-deadline': 123,
      [HOLD_COUNT_HEADER]: 2,
      [HELD_SINCE_HEADER]: NOW - 10,
    });
  });

  it('declares the hold queue durable, dead-lettering through the default exchange to its own queue only', () => {
    expect(holdQueueOptions('ns.orchestrator.p3')).toEqual({
      durable: true,
      arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'ns.orchestrator.p3' },
    });
    // On quorum queues, dead-lettering back to the work queue must be at-least-once (it is at-most-once by default).
    expect(holdQueueOptions('ns.orchestrator.p3', 'quorum').arguments).toMatchObject({
      'x-queue-type': 'quorum',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    });
  });

  it('defaults to a 30 s hold, at most 120 holds or an hour', () => {
    expect(resolveHoldOptions()).toEqual({ delayMs: 30_000, maxHolds: 120, maxAgeMs: 3_600_000 });
    expect(resolveHoldOptions({ delayMs: 500 })).toEqual({ delayMs: 500, maxHolds: 120, maxAgeMs: 3_600_000 });
  });
});
