import type { Connection } from 'mongoose';
import { connectMongo, ensureIndexes } from '@tes/store';
import { MONGO_URL, memoryLogger, uniqueName } from '@tes/testing';
import { windowOf } from '../domain/rate-window.js';
import { RateLimitRepository } from './rate-limit.repository.js';

/**
 * The limiter against the real MongoDB-wire server (FerretDB v1 here: no locks on
 * updates, which is why it is built from inserts). Three repositories on three
 * connections stand for three gateway replicas.
 */
describe('rate limiter (real database, several replicas)', () => {
  const { logger } = memoryLogger('gateway');
  const dbName = uniqueName('gw_rl');
  const conns: Connection[] = [];
  const replicas: RateLimitRepository[] = [];
  // A fixed instant in the middle of a minute: no test straddles a window boundary.
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const conn = await connectMongo({ url: MONGO_URL, dbName, logger });
      conns.push(conn);
      replicas.push(new RateLimitRepository(conn));
    }
    await ensureIndexes(conns[0]!);
  });

  afterAll(async () => {
    await conns[0]?.dropDatabase();
    await Promise.all(conns.map((c) => c.close()));
  });

  it('admits exactly the limit under concurrent requests spread over replicas, each ticket once', async () => {
    const account = uniqueName('acct');
    const decisions = await Promise.all(Array.from({ length: 140 }, (_, i) => replicas[i % 3]!.acquire(account, 100, now)));
    const admitted = decisions.filter((d) => d.admitted);
    expect(admitted).toHaveLength(100);
    expect(new Set(admitted.map((d) => d.remaining)).size).toBe(100); // tickets 1..100, each once
    expect(Math.min(...admitted.map((d) => d.remaining))).toBe(0);
    for (const d of decisions.filter((x) => !x.admitted)) {
      expect(d).toMatchObject({ limit: 100, remaining: 0, retryAfter: 30, reset: (windowOf(now) + 1) * 60 });
    }
    const stored = await conns[0]!.collection('rate_tickets').countDocuments({ account_id: account });
    expect(stored).toBe(100); // refused requests write nothing
  });

  it('stays exact with interleaved bursts from every replica (3 × 150 for a limit of 300)', async () => {
    const account = uniqueName('acct');
    const bursts = await Promise.all(replicas.map((r) => Promise.all(Array.from({ length: 150 }, () => r.acquire(account, 300, now)))));
    const admitted = bursts.flat().filter((d) => d.admitted);
    expect(admitted).toHaveLength(300);
    expect(new Set(admitted.map((d) => d.remaining)).size).toBe(300);
  });

  it('counts sequential requests exactly: request k leaves limit - k, the (limit+1)th is refused', async () => {
    const account = uniqueName('acct');
    for (let k = 1; k <= 5; k++) {
      const d = await replicas[k % 3]!.acquire(account, 5, now);
      expect(d).toMatchObject({ admitted: true, remaining: 5 - k, limit: 5 });
    }
    await expect(replicas[0]!.acquire(account, 5, now)).resolves.toMatchObject({ admitted: false, remaining: 0 });
    await expect(replicas[1]!.acquire(account, 5, now)).resolves.toMatchObject({ admitted: false, remaining: 0 });
  });

  it('stays exact when requests alternate between replicas (each one jumps over what the others took)', async () => {
    const account = uniqueName('acct');
    const remaining: number[] = [];
    for (let k = 0; k < 32; k++) {
      const d = await replicas[k % 3]!.acquire(account, 30, now);
      remaining.push(d.admitted ? d.remaining : -1);
    }
    expect(remaining).toEqual([...Array.from({ length: 30 }, (_, i) => 29 - i), -1, -1]);
  });

  it('keeps accounts apart and starts every window afresh', async () => {
    const a = uniqueName('acct');
    const b = uniqueName('acct');
    await replicas[0]!.acquire(a, 1, now);
    await expect(replicas[0]!.acquire(a, 1, now)).resolves.toMatchObject({ admitted: false });
    await expect(replicas[0]!.acquire(b, 1, now)).resolves.toMatchObject({ admitted: true });
    await expect(replicas[0]!.acquire(a, 1, now + 60_000)).resolves.toMatchObject({ admitted: true, remaining: 0 });
  });

  it('applies a raised limit within the window', async () => {
    const a = uniqueName('acct');
    await replicas[0]!.acquire(a, 1, now);
    await expect(replicas[1]!.acquire(a, 1, now)).resolves.toMatchObject({ admitted: false });
    await expect(replicas[2]!.acquire(a, 3, now)).resolves.toMatchObject({ admitted: true, remaining: 1 });
  });

  it('sweeps the tickets of ended windows only', async () => {
    const a = uniqueName('acct');
    await replicas[0]!.acquire(a, 10, now - 5 * 60_000);
    await replicas[0]!.acquire(a, 10, now);
    await replicas[0]!.sweep(windowOf(now) - 2);
    const left = await conns[0]!.collection('rate_tickets').find({ account_id: a }).toArray();
    expect(left.map((d) => d['window'])).toEqual([windowOf(now)]);
  });

  it('after its first sweep, deletes each ended window by itself, and nothing newer', async () => {
    const sweeper = new RateLimitRepository(conns[0]!);
    const w = windowOf(now);
    await sweeper.sweep(w - 2); // the first sweep: one range delete
    const a = uniqueName('acct');
    // Tickets of the three windows that end next, and of the current one.
    for (const back of [2, 1, 0]) await replicas[1]!.acquire(a, 10, now - back * 60_000);
    const windows = async () =>
      (await conns[0]!.collection('rate_tickets').find({ account_id: a }).toArray()).map((d) => d['window'] as number).sort();
    expect(await windows()).toEqual([w - 2, w - 1, w]);
    expect(await sweeper.sweep(w - 1)).toBe(1);
    expect(await windows()).toEqual([w - 1, w]);
    expect(await sweeper.sweep(w)).toBe(1);
    expect(await windows()).toEqual([w]);
    expect(await sweeper.sweep(w)).toBe(0); // nothing left below w, and w itself stays
    expect(await windows()).toEqual([w]);
  });
});
