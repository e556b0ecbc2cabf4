import type { PendingDoc } from '../domain/stored-event.js';
import type { DeliveryJob } from './endpoint-queues.js';
import { FastLane } from './fast-lane.js';
import { TaskOrdering } from './task-ordering.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const POLL_MS = 500;

function pending(task: string, version: number, fields: Partial<PendingDoc> = {}): PendingDoc {
  return {
    _id: `${task}_${version}`,
    event_id: `${task}_${version}`,
    account_id: 'acc',
    environment: 'test',
    task_id: task,
    version,
    attempts_made: 0,
    received_at: new Date(NOW - 10_000),
    next_attempt_at: new Date(NOW + 30_000),
    ...fields,
  } as PendingDoc;
}

/** A fast lane over a fake database whose pending documents are `db`, feeding a queue that records what it gets. */
function lane(db: PendingDoc[] = []) {
  const reads: string[] = [];
  const ordering = new TaskOrdering(
    {
      pending: {
        ofTask: async (t) => {
          reads.push(t.task_id);
          return db.filter((d) => d.task_id === t.task_id);
        },
        taskDocs: async (t) => db.filter((d) => d.task_id === t.task_id),
      },
      events: { hasVersion: async () => true },
    },
    { pollIntervalMs: POLL_MS, orderGapWaitMs: 0 },
  );
  const queued: string[] = [];
  const queue = {
    inHand: new Set<string>(),
    enqueue: (job: DeliveryJob) => queued.push(job.doc.event_id),
    pump: () => undefined,
  };
  return { fastLane: new FastLane(ordering, queue, { pollIntervalMs: POLL_MS, concurrency: 10 }), queue, queued, reads };
}

describe('fast lane', () => {
  it('queues what it can order from memory, and keeps the rest in hand for the checks', () => {
    const { fastLane, queue, queued } = lane();
    fastLane.accept([
      { kind: 'pending', doc: pending('t1', 1) },
      { kind: 'pending', doc: pending('t1', 2) },
      { kind: 'pending', doc: pending('t2', 3) },
    ]);
    expect(queued).toEqual(['t1_1']);
    expect(fastLane.waiting).toBe(1);
    expect([...queue.inHand].sort()).toEqual(['t1_1', 't1_2', 't2_3']);
  });

  it('sends the next event of a task once the one before is done, and the followers to the checks when it is not', () => {
    const { fastLane, queued } = lane();
    const [a1, a2, b1, b2] = [pending('a', 1), pending('a', 2), pending('b', 1), pending('b', 2)];
    fastLane.accept([a1, a2, b1, b2].map((doc) => ({ kind: 'pending' as const, doc })));
    fastLane.settled(a1, true);
    fastLane.settled(b1, false);
    expect(queued).toEqual(['a_1', 'b_1', 'a_2']);
    expect(fastLane.waiting).toBe(1);
  });

  it('places a checked event by reading its task once its turn comes, and not before the time it was told', async () => {
    const blocker = pending('t1', 1, { attempts_made: 1, next_attempt_at: new Date(NOW + 5000) });
    const db = [blocker];
    const { fastLane, queued, reads } = lane(db);
    fastLane.accept([{ kind: 'pending', doc: pending('t1', 2) }]);
    await fastLane.runChecks(NOW);
    expect(queued).toEqual([]);
    await fastLane.runChecks(NOW + 1000);
    expect(reads).toEqual(['t1']);
    db.pop();
    expect(fastLane.predecessorGone('t1')).toBe(true);
    await fastLane.runChecks(NOW + 1000);
    expect(queued).toEqual(['t1_2']);
    expect(fastLane.waiting).toBe(0);
  });

  it('leaves to the pollers the checked events past their hand-off time', async () => {
    const { fastLane, queue, queued, reads } = lane();
    fastLane.accept([
      { kind: 'pending', doc: pending('t1', 2, { next_attempt_at: new Date(NOW - 1) }) },
      { kind: 'pending', doc: pending('t1', 3) },
    ]);
    await fastLane.runChecks(NOW);
    expect(queued).toEqual([]);
    expect(reads).toEqual([]);
    expect(fastLane.waiting).toBe(0);
    expect(queue.inHand.size).toBe(0);
  });
});
