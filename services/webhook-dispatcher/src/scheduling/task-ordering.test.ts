import type { TaskEventKind } from '@tes/contracts';
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

function marker(version: number, kind: TaskEventKind = 'started', task = 'task_1') {
  return { kind: 'final' as const, doc: { account_id: 'acc', environment: 'test' as const, task_id: task, version, kind } };
}

/** An ordering over a fake database: the task's pending documents and the versions stored in their final state. */
function ordering(db: { pending?: PendingHead[]; docs?: PendingDoc[]; stored?: number[] } = {}) {
  const reads = { ofTask: 0, hasVersion: 0, taskDocs: 0 };
  const deps = {
    pending: {
      ofTask: async () => {
        reads.ofTask += 1;
        return db.pending ?? [];
      },
      taskDocs: async () => {
        reads.taskDocs += 1;
        return db.docs ?? [];
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
    expect(reads).toEqual({ ofTask: 0, hasVersion: 0, taskDocs: 0 });
  });

  it('places version 1 without a read', async () => {
    const { ordering: o, reads } = ordering();
    expect(await o.placeAll([pending(1)], NOW)).toEqual([{ kind: 'head' }]);
    expect(reads).toEqual({ ofTask: 0, hasVersion: 0, taskDocs: 0 });
  });

  it('makes an event wait behind a lower pending version: until its retry, or the next poll at least', async () => {
    const retry = pending(1, { attempts_made: 1, next_attempt_at: new Date(NOW + 60_000) });
    expect(await ordering({ pending: [retry] }).ordering.placeAll([pending(2)], NOW)).toEqual([{ kind: 'wait', until: NOW + 60_000 }]);
    const fresh = pending(1, { next_attempt_at: new Date(NOW + 60_000) });
    expect(await ordering({ pending: [fresh] }).ordering.placeAll([pending(2)], NOW)).toEqual([{ kind: 'wait', until: NOW + POLL_MS }]);
  });

  it('gives a fresh event a moment for its predecessor to arrive, then lets it go', async () => {
    const fresh = pending(3, { received_at: new Date(NOW - 1800) });
    const { ordering: o, reads } = ordering();
    expect(await o.placeAll([fresh], NOW)).toEqual([{ kind: 'wait', until: NOW + 200 }]);
    expect(reads).toEqual({ ofTask: 1, hasVersion: 1, taskDocs: 0 });
    expect(await o.placeAll([fresh], NOW + 200)).toEqual([{ kind: 'head' }]);
  });

  it('lets a fresh event go when its predecessor is stored, or was seen pending', async () => {
    const fresh = pending(3, { received_at: new Date(NOW) });
    expect(await ordering({ stored: [2] }).ordering.placeAll([fresh], NOW)).toEqual([{ kind: 'head' }]);
    const seen = ordering();
    seen.ordering.arrive({ kind: 'pending', doc: pending(2, { task_id: 'task_1' }) });
    seen.ordering.handOver(pending(2));
    expect(await seen.ordering.placeAll([fresh], NOW)).toEqual([{ kind: 'head' }]);
    expect(seen.reads.hasVersion).toBe(0);
  });

  it('does not wait for version 1 (the unstored created event): a fresh version 2 goes at once, without a read of events', async () => {
    const fresh = pending(2, { received_at: new Date(NOW) });
    const { ordering: o, reads } = ordering({ stored: [] });
    expect(await o.placeAll([fresh], NOW)).toEqual([{ kind: 'head' }]);
    expect(reads.hasVersion).toBe(0);
  });

  it('does not wait for the predecessor of a retry', async () => {
    const retry = pending(2, { attempts_made: 1, received_at: new Date(NOW) });
    const { ordering: o, reads } = ordering();
    expect(await o.placeAll([retry], NOW)).toEqual([{ kind: 'head' }]);
    expect(reads.hasVersion).toBe(0);
  });
});

describe('memory of the tasks seen', () => {
  const doc = (task: string, version: number, kind: TaskEventKind) =>
    pending(version, { task_id: task, event_id: `${task}_${version}`, kind });

  it('forgets a task once its last event is delivered, so memory does not grow with the tasks ever seen', () => {
    const { ordering: o } = ordering();
    for (let i = 0; i < 5000; i++) {
      const t = `task_${i}`;
      const [v2, v3] = [doc(t, 2, 'progress'), doc(t, 3, 'completed')];
      o.arrive(marker(1, 'created', t));
      o.arrive({ kind: 'pending', doc: v2 });
      o.arrive({ kind: 'pending', doc: v3 });
      expect(o.settled(v2, true).next).toBe(v3);
      o.settled(v3, true);
    }
    expect(o.knownTasks).toBe(0);
  });

  it('forgets a task whose last event was given up (undeliverable) or delivered through the poller, and one cancelled', () => {
    const { ordering: o } = ordering();
    // task_a: its completion failed once, so its retry settles outside the chain.
    const [a1, a2] = [doc('task_a', 1, 'progress'), doc('task_a', 2, 'failed')];
    o.arrive({ kind: 'pending', doc: a1 });
    o.arrive({ kind: 'pending', doc: a2 });
    o.settled(a1, true);
    expect(o.settled(a2, false).next).toBeUndefined();
    expect(o.knownTasks).toBe(1);
    o.settled({ ...a2, attempts_made: 5 }, true);
    expect(o.knownTasks).toBe(0);
    // task_b: cancelled (a skipped marker) while an event of it is still pending here.
    const b1 = doc('task_b', 1, 'progress');
    o.arrive({ kind: 'pending', doc: b1 });
    o.arrive(marker(2, 'cancelled', 'task_b'));
    expect(o.knownTasks).toBe(1);
    o.settled(b1, true);
    expect(o.knownTasks).toBe(0);
  });

  it('remembers a task in progress', () => {
    const { ordering: o } = ordering();
    const v1 = doc('task_c', 1, 'progress');
    o.arrive({ kind: 'pending', doc: v1 });
    o.settled(v1, true);
    expect(o.knownTasks).toBe(1);
    expect(o.arrive({ kind: 'pending', doc: doc('task_c', 2, 'completed') })).toBe('go');
  });
});

describe('adopting the next events of a task (after its held event is done)', () => {
  const fast = (version: number, fields: Partial<PendingDoc> = {}) => pending(version, { lane: 'fast', kind: 'progress', ...fields });

  it('takes the pending events of the task in version order as a chain: each goes when the one before it is done', async () => {
    const [v3, v4, v5] = [fast(3), fast(4), fast(5, { kind: 'completed' })];
    const { ordering: o, reads } = ordering({ docs: [v5, v3, v4] });
    expect(await o.adopt(pending(2), NOW, () => false)).toEqual([v3, v4, v5]);
    expect(reads.taskDocs).toBe(1);
    expect(o.settled(v3, true).next).toBe(v4);
    expect(o.settled(v4, true).next).toBe(v5);
    o.settled(v5, true);
    expect(o.knownTasks).toBe(0);
  });

  it('stops the chain at a version gap it cannot prove, at a retry not due yet, and at an event in hand', async () => {
    const gap = ordering({ docs: [fast(3), fast(5)] });
    expect((await gap.ordering.adopt(pending(2), NOW, () => false)).map((d) => d.version)).toEqual([3]);
    const retry = ordering({ docs: [fast(3), pending(4, { lane: 'open', attempts_made: 1, next_attempt_at: new Date(NOW + 60_000) })] });
    expect((await retry.ordering.adopt(pending(2), NOW, () => false)).map((d) => d.version)).toEqual([3]);
    const inHand = ordering({ docs: [fast(3), fast(4)] });
    expect(await inHand.ordering.adopt(pending(2), NOW, (id) => id === 'evt_3')).toEqual([]);
  });

  it('takes nothing when the lowest pending event is a retry not due yet', async () => {
    const retry = pending(3, { lane: 'open', attempts_made: 1, next_attempt_at: new Date(NOW + 60_000) });
    expect(await ordering({ docs: [retry, fast(4)] }).ordering.adopt(pending(2), NOW, () => false)).toEqual([]);
  });

  it('uses the schedule with the most attempts when a retry left its previous document behind', async () => {
    const old = fast(3);
    const current = pending(3, { _id: 'evt_3~1', lane: 'open', attempts_made: 1, next_attempt_at: new Date(NOW - 1000) });
    expect(await ordering({ docs: [old, current] }).ordering.adopt(pending(2), NOW, () => false)).toEqual([current]);
  });
});
