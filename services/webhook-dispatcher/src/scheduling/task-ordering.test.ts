import type { PendingDoc, PendingHead } from '../domain/stored-event.js';
import { TaskOrdering } from './task-ordering.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const POLL_MS = 500;
const GAP_MS = 2000;

function pending(version: number, fields: Partial<PendingDoc> = {}): PendingDoc {
  return {
    _id: `evt_${version}`,
    event_id: `evt_${version}`,
    account_id: 'acc',
    environment: 'test',
    task_id: 'task_1',
    version,
    attempts_made: 0,
    received_at: new Date(NOW - 10_000),
    next_attempt_at: new Date(NOW + 30_000),
    ...fields,
  } as PendingDoc;
}

function marker(version: number) {
  return { kind: 'final' as const, doc: { account_id: 'acc', environment: 'test' as const, task_id: 'task_1', version } };
}

/** An ordering over a fake database: the task's pending documents and the versions stored in their final state. */
function ordering(db: { pending?: PendingHead[]; stored?: number[] } = {}) {
  const reads = { ofTask: 0, hasVersion: 0 };
  const deps = {
    pending: {
      ofTask: async () => {
        reads.ofTask += 1;
        return db.pending ?? [];
      },
    },
    events: {
      hasVersion: async (_task: unknown, version: number) => {
        reads.hasVersion += 1;
        return (db.stored ?? []).includes(version);
      },
    },
  };
  return { ordering: new TaskOrdering(deps, { pollIntervalMs: POLL_MS, orderGapWaitMs: GAP_MS }), reads };
}

describe('task ordering of the events stored here', () => {
  it('lets version 1 go, and queues the next versions behind it', () => {
    const { ordering: o } = ordering();
    expect(o.arrive({ kind: 'pending', doc: pending(1) })).toBe('go');
    expect(o.arrive({ kind: 'pending', doc: pending(2) })).toBe('behind');
    expect(o.arrive({ kind: 'pending', doc: pending(3) })).toBe('behind');
  });

  it('lets an event go at once when the versions before it were skipped markers stored here', () => {
    const { ordering: o } = ordering();
    expect(o.arrive(marker(1))).toBeUndefined();
    expect(o.arrive(marker(2))).toBeUndefined();
    expect(o.arrive({ kind: 'pending', doc: pending(3) })).toBe('go');
  });

  it('sends an event to the checks when a version before it was not stored here', () => {
    const { ordering: o } = ordering();
    expect(o.arrive({ kind: 'pending', doc: pending(2) })).toBe('check');
    expect(o.arrive({ kind: 'pending', doc: pending(1) })).toBe('go');
    expect(o.arrive({ kind: 'pending', doc: pending(3) })).toBe('check');
  });

  it('hands the next event over when the one before it is done for good', () => {
    const { ordering: o } = ordering();
    const [v1, v2, v3] = [pending(1), pending(2), pending(3)];
    for (const doc of [v1, v2, v3]) o.arrive({ kind: 'pending', doc });
    expect(o.settled(v1, true)).toEqual({ next: v2, unplaced: [] });
    expect(o.settled(v2, true)).toEqual({ next: v3, unplaced: [] });
    expect(o.settled(v3, true)).toEqual({ next: undefined, unplaced: [] });
    expect(o.arrive({ kind: 'pending', doc: pending(4) })).toBe('go');
  });

  it('forgets the task when an event is not done (a retry is scheduled): its followers are placed by reading', () => {
    const { ordering: o } = ordering();
    const [v1, v2, v3] = [pending(1), pending(2), pending(3)];
    for (const doc of [v1, v2, v3]) o.arrive({ kind: 'pending', doc });
    expect(o.settled(v1, false)).toEqual({ next: undefined, unplaced: [v2, v3] });
    expect(o.arrive({ kind: 'pending', doc: pending(4) })).toBe('check');
  });

  it('changes nothing when the settled event is not the head of its task here', () => {
    const { ordering: o } = ordering();
    const [v1, v2] = [pending(1), pending(2)];
    for (const doc of [v1, v2]) o.arrive({ kind: 'pending', doc });
    expect(o.settled(v2, true)).toEqual({ next: undefined, unplaced: [] });
    expect(o.handOver(v2)).toEqual([]);
    expect(o.settled(v1, true)).toEqual({ next: v2, unplaced: [] });
  });

  it('returns the followers of an event handed over to the database, and forgets its task', () => {
    const { ordering: o } = ordering();
    const [v1, v2, v3] = [pending(1), pending(2), pending(3)];
    for (const doc of [v1, v2, v3]) o.arrive({ kind: 'pending', doc });
    expect(o.handOver(v1)).toEqual([v2, v3]);
    expect(o.settled(v1, true)).toEqual({ next: undefined, unplaced: [] });
  });
});

describe('task ordering by reading the database', () => {
  it('places an event without a read when every earlier version was stored here and is done', async () => {
    const { ordering: o, reads } = ordering();
    const v1 = pending(1);
    o.arrive({ kind: 'pending', doc: v1 });
    o.settled(v1, true);
    expect(await o.placeAll([pending(2)], NOW)).toEqual([{ kind: 'head' }]);
    expect(reads).toEqual({ ofTask: 0, hasVersion: 0 });
  });

  it('places version 1 without a read', async () => {
    const { ordering: o, reads } = ordering();
    expect(await o.placeAll([pending(1)], NOW)).toEqual([{ kind: 'head' }]);
    expect(reads).toEqual({ ofTask: 0, hasVersion: 0 });
  });

  it('makes an event wait behind a lower pending version: until its retry, or the next poll at least', async () => {
    const retry = pending(1, { attempts_made: 1, next_attempt_at: new Date(NOW + 60_000) });
    expect(await ordering({ pending: [retry] }).ordering.placeAll([pending(2)], NOW)).toEqual([{ kind: 'wait', until: NOW + 60_000 }]);
    const fresh = pending(1, { next_attempt_at: new Date(NOW + 60_000) });
    expect(await ordering({ pending: [fresh] }).ordering.placeAll([pending(2)], NOW)).toEqual([{ kind: 'wait', until: NOW + POLL_MS }]);
  });

  it('gives a fresh event a moment for its predecessor to arrive, then lets it go', async () => {
    const fresh = pending(2, { received_at: new Date(NOW - 1800) });
    const { ordering: o, reads } = ordering();
    expect(await o.placeAll([fresh], NOW)).toEqual([{ kind: 'wait', until: NOW + 200 }]);
    expect(reads).toEqual({ ofTask: 1, hasVersion: 1 });
    expect(await o.placeAll([fresh], NOW + 200)).toEqual([{ kind: 'head' }]);
  });

  it('lets a fresh event go when its predecessor is stored, or was seen pending', async () => {
    const fresh = pending(2, { received_at: new Date(NOW) });
    expect(await ordering({ stored: [1] }).ordering.placeAll([fresh], NOW)).toEqual([{ kind: 'head' }]);
    const seen = ordering();
    seen.ordering.arrive({ kind: 'pending', doc: pending(1, { task_id: 'task_1' }) });
    seen.ordering.handOver(pending(1));
    expect(await seen.ordering.placeAll([fresh], NOW)).toEqual([{ kind: 'head' }]);
    expect(seen.reads.hasVersion).toBe(0);
  });

  it('does not wait for the predecessor of a retry', async () => {
    const retry = pending(2, { attempts_made: 1, received_at: new Date(NOW) });
    const { ordering: o, reads } = ordering();
    expect(await o.placeAll([retry], NOW)).toEqual([{ kind: 'head' }]);
    expect(reads.hasVersion).toBe(0);
  });
});
