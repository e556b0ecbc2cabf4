import { LastUsedThrottle } from './last-used.js';

describe('LastUsedThrottle', () => {
  it('writes a key at most once per interval, each key on its own, with the time of the write', async () => {
    let now = 1_000_000;
    const writes: [string, number][] = [];
    const t = new LastUsedThrottle(
      async (id, at) => void writes.push([id, at.getTime()]),
      () => undefined,
      60_000,
      () => now,
    );
    for (let i = 0; i < 100; i++) t.touch('key_a');
    t.touch('key_b');
    now += 59_999;
    t.touch('key_a');
    now += 1;
    t.touch('key_a');
    t.touch('key_a');
    expect(writes).toEqual([
      ['key_a', 1_000_000],
      ['key_b', 1_000_000],
      ['key_a', 1_060_000],
    ]);
  });

  it('reports a failed write and does not retry it within the interval', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const t = new LastUsedThrottle(
      async () => {
        calls++;
        throw new Error('database down');
      },
      (err) => errors.push(err),
      60_000,
      () => 0,
    );
    t.touch('key_a');
    t.touch('key_a');
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
  });
});
