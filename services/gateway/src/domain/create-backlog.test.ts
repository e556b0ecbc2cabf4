import { deferred } from '@tes/testing';
import { CreateBacklog } from './create-backlog.js';

describe('CreateBacklog', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 10_000;
  });

  it('is not backlogged with no unanswered create, nor while the oldest has waited no longer than the bound', () => {
    const b = new CreateBacklog(1000, clock);
    expect(b.isBacklogged('acc_a')).toBe(false);
    void b.track('acc_a', deferred<void>().promise);
    now += 1000;
    expect(b.isBacklogged('acc_a')).toBe(false);
    now += 1;
    expect(b.isBacklogged('acc_a')).toBe(true);
  });

  it('looks at the oldest unanswered create: answering it lets the account create again', async () => {
    const b = new CreateBacklog(1000, clock);
    const first = deferred<string>();
    const tracked = b.track('acc_a', first.promise);
    now += 600;
    const second = deferred<string>();
    const tracked2 = b.track('acc_a', second.promise);
    now += 500; // first waited 1,100 ms, second 500 ms
    expect(b.isBacklogged('acc_a')).toBe(true);
    first.resolve('task_1');
    await expect(tracked).resolves.toBe('task_1');
    expect(b.isBacklogged('acc_a')).toBe(false);
    now += 501; // second now waited 1,001 ms
    expect(b.isBacklogged('acc_a')).toBe(true);
    second.reject(new Error('timed out'));
    await expect(tracked2).rejects.toThrow('timed out');
    expect(b.isBacklogged('acc_a')).toBe(false);
    expect(b.size).toBe(0);
  });

  it('keeps accounts apart: one account queueing does not shed another', () => {
    const b = new CreateBacklog(1000, clock);
    void b.track('acc_a', deferred<void>().promise);
    now += 5000;
    void b.track('acc_b', deferred<void>().promise);
    expect(b.isBacklogged('acc_a')).toBe(true);
    expect(b.isBacklogged('acc_b')).toBe(false);
    expect(b.isBacklogged('acc_c')).toBe(false);
    expect(b.size).toBe(2);
  });

  it('tells the oldest wait over all accounts, and with a bound of 0 too (what the gauges read)', async () => {
    const b = new CreateBacklog(0, clock);
    expect([b.size, b.oldestWaitMs()]).toEqual([0, 0]);
    const first = deferred<void>();
    const tracked = b.track('acc_b', first.promise);
    now += 300;
    void b.track('acc_a', deferred<void>().promise);
    now += 200;
    expect([b.size, b.oldestWaitMs()]).toEqual([2, 500]);
    first.resolve();
    await tracked;
    expect([b.size, b.oldestWaitMs()]).toEqual([1, 200]);
  });

  it('never sheds with a bound of 0', () => {
    const b = new CreateBacklog(0, clock);
    void b.track('acc_a', deferred<void>().promise);
    now += 60_000;
    expect(b.isBacklogged('acc_a')).toBe(false);
  });
});
