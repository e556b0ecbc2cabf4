import { PartitionMemory, type Attachment } from './partition-memory.js';
import type { Task } from './task.js';

const attachment = (id: number): Attachment & { open: boolean } => ({ id, open: true });

function task(id: string, status: Task['status'] = 'running'): Task {
  return {
    _id: id,
    account_id: 'acct_1',
    environment: 'test',
    user_id: null,
    prompt: 'Echo "x"',
    metadata: {},
    mode: 'live',
    status,
    tool: 'text',
    created_at: '2026-01-01T00:00:00.000Z',
    current_step: 0,
    outputs: [],
    concurrency_limit: 5,
    version: 1,
    outbox: [],
  };
}

/** What an orchestrator partition's writer keeps in memory, and when it must forget it. */
describe('partition memory', () => {
  it('keeps what it learned while messages come on the same open attachment', () => {
    const mem = new PartitionMemory();
    const a = attachment(1);
    mem.enter(a);
    mem.counts.set('acct_1', { running: 2, pending: 1 });
    mem.setCustomTools('acct_1', 'test', []);
    mem.wrote(task('task_1'));
    mem.enter(a);
    expect(mem.counts.get('acct_1')).toEqual({ running: 2, pending: 1 });
    expect(mem.customTools('acct_1', 'test')).toEqual([]);
    expect(mem.doc('task_1')?._id).toBe('task_1');
    expect(mem.valid).toBe(true);
  });

  it('forgets everything when a message comes on another attachment (it may have just become active)', () => {
    const mem = new PartitionMemory();
    mem.enter(attachment(1));
    mem.counts.set('acct_1', { running: 2, pending: 0 });
    mem.setCustomTools('acct_1', 'test', []);
    mem.wrote(task('task_1'));
    mem.outboxPublished('task_1', 1);
    mem.enter(attachment(2));
    expect(mem.counts.get('acct_1')).toBeUndefined();
    expect(mem.customTools('acct_1', 'test')).toBeUndefined();
    expect(mem.doc('task_1')).toBeUndefined();
    expect(mem.isPublished('task_1', 1)).toBe(false);
  });

  it('is not valid once its attachment has closed', () => {
    const mem = new PartitionMemory();
    const a = attachment(1);
    mem.enter(a);
    a.open = false;
    expect(mem.valid).toBe(false);
  });

  it('forgets the custom tools of an account environment on tool.register or tool.delete', () => {
    const mem = new PartitionMemory();
    mem.enter(attachment(1));
    mem.setCustomTools('acct_1', 'test', []);
    mem.setCustomTools('acct_1', 'live', []);
    mem.toolsChanged('acct_1', 'test');
    expect(mem.customTools('acct_1', 'test')).toBeUndefined();
    expect(mem.customTools('acct_1', 'live')).toEqual([]);
  });

  it('hands out copies of tasks, and forgets finished ones', () => {
    const mem = new PartitionMemory();
    mem.enter(attachment(1));
    mem.wrote(task('task_1'));
    const copy = mem.doc('task_1');
    copy!.status = 'failed';
    expect(mem.doc('task_1')?.status).toBe('running');
    mem.wrote(task('task_1', 'complete'));
    expect(mem.doc('task_1')).toBeUndefined();
  });

  it('tracks published outboxes by version until a rewrite or their clear in the database', () => {
    const mem = new PartitionMemory();
    mem.enter(attachment(1));
    mem.outboxPublished('task_1', 1);
    mem.outboxPublished('task_2', 3, true);
    expect(mem.isPublished('task_1', 1)).toBe(true);
    expect(mem.isPublished('task_1', 2)).toBe(false);
    mem.rewritten('task_1');
    expect(mem.publishedToClear()).toEqual([{ id: 'task_2', version: 3, ended: true }]);
    // Handed out once, and still known published while its clear is under way.
    expect(mem.publishedToClear()).toEqual([]);
    expect(mem.isPublished('task_2', 3)).toBe(true);
    mem.outboxCleared('task_2', 3);
    expect(mem.isPublished('task_2', 3)).toBe(false);
  });

  it('keeps a newer published outbox when the clear of an older version ends', () => {
    const mem = new PartitionMemory();
    mem.enter(attachment(1));
    mem.outboxPublished('task_1', 1);
    expect(mem.publishedToClear()).toEqual([{ id: 'task_1', version: 1, ended: false }]);
    mem.outboxPublished('task_1', 2);
    mem.outboxCleared('task_1', 1);
    expect(mem.isPublished('task_1', 2)).toBe(true);
    expect(mem.publishedToClear()).toEqual([{ id: 'task_1', version: 2, ended: false }]);
  });

  it('runs the work of one lane one at a time, in order, a failed one not stopping the next', async () => {
    const mem = new PartitionMemory();
    const order: string[] = [];
    const slow = mem.task('task_1', async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push('first');
      throw new Error('boom');
    });
    const fast = mem.task('task_1', async () => {
      order.push('second');
    });
    await expect(slow).rejects.toThrow('boom');
    await fast;
    expect(order).toEqual(['first', 'second']);
    await new Promise((r) => setImmediate(r));
    expect(mem.busyLanes).toBe(0);
  });

  it('runs the lanes of different tasks side by side, and an account lane apart from its tasks', async () => {
    const mem = new PartitionMemory();
    const order: string[] = [];
    const gate = deferredVoid();
    const blocked = mem.task('task_1', async () => {
      await gate.promise;
      order.push('task_1');
    });
    await mem.task('task_2', async () => {
      order.push('task_2');
    });
    // Nested account → task: waits for task_1's lane only.
    const nested = mem.account('acc_1', () =>
      mem.task('task_1', async () => {
        order.push('account then task_1');
      }),
    );
    await mem.account('acc_2', async () => {
      order.push('acc_2');
    });
    gate.resolve();
    await Promise.all([blocked, nested]);
    expect(order).toEqual(['task_2', 'acc_2', 'task_1', 'account then task_1']);
    await new Promise((r) => setImmediate(r));
    expect(mem.busyLanes).toBe(0);
  });
});

function deferredVoid(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
