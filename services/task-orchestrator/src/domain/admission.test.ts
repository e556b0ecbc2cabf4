import { Admission, AdmissionCounts } from './admission.js';
import type { TaskStore } from './ports.js';
import type { ActiveCounts, Task } from './task.js';

/** A store holding the account's counts and its oldest pending task, counting the reads. */
function store(counts: ActiveCounts, oldest: Pick<Task, '_id' | 'concurrency_limit'> | null) {
  const reads = { countActive: 0, oldestPending: 0 };
  const tasks: Pick<TaskStore, 'countActive' | 'oldestPending'> = {
    countActive: async () => {
      reads.countActive++;
      return { ...counts };
    },
    oldestPending: async () => {
      reads.oldestPending++;
      return oldest as Task | null;
    },
  };
  return { tasks, reads };
}

describe('admission', () => {
  it('follows the counts through status changes, and drops them rather than go negative', () => {
    const counts = new AdmissionCounts();
    counts.set('acct_1', { running: 1, pending: 0 });
    counts.moved('acct_1', undefined, 'pending');
    counts.moved('acct_1', 'running', 'complete');
    counts.moved('acct_1', 'pending', 'running');
    expect(counts.get('acct_1')).toEqual({ running: 1, pending: 0 });
    counts.moved('acct_1', 'pending', 'cancelled');
    expect(counts.get('acct_1')).toBeUndefined();
  });

  it('reads the counts of an account once, then follows them in memory', async () => {
    const { tasks, reads } = store({ running: 1, pending: 0 }, null);
    const admission = new Admission(tasks);
    const known = new AdmissionCounts();
    expect(await admission.admitsNew(known, 'acct_1', 2)).toBe(true);
    known.moved('acct_1', undefined, 'running');
    expect(await admission.admitsNew(known, 'acct_1', 2)).toBe(false);
    expect(reads.countActive).toBe(1);
  });

  it('hands out the oldest pending task only when a slot is free for it, reading nothing when none is pending', async () => {
    const oldest = { _id: 'task_1', concurrency_limit: 2 };
    const free = store({ running: 1, pending: 1 }, oldest);
    expect(await new Admission(free.tasks).next(new AdmissionCounts(), 'acct_1')).toBe(oldest);
    const full = store({ running: 2, pending: 1 }, oldest);
    expect(await new Admission(full.tasks).next(new AdmissionCounts(), 'acct_1')).toBeUndefined();
    const none = store({ running: 0, pending: 0 }, oldest);
    expect(await new Admission(none.tasks).next(new AdmissionCounts(), 'acct_1')).toBeUndefined();
    expect(none.reads.oldestPending).toBe(0);
  });

  it('reads the counts again when a pending task it counted is not found', async () => {
    const { tasks, reads } = store({ running: 0, pending: 1 }, null);
    const admission = new Admission(tasks);
    const known = new AdmissionCounts();
    expect(await admission.next(known, 'acct_1')).toBeUndefined();
    expect(known.get('acct_1')).toBeUndefined();
    await admission.next(known, 'acct_1');
    expect(reads.countActive).toBe(2);
  });
});
