/**
 * Cost of the gateway's rate limiter per request against the real database (MONGO_URL), next to
 * the "insert a hit, then count the window" design. Prints milliseconds and database commands per
 * request. Takes about a minute:
 *   pnpm build && pnpm exec tsx services/gateway/bench/rate-limit.ts
 */
import { randomBytes } from 'node:crypto';
import mongoose, { type Connection } from 'mongoose';
import { ensureIndexes } from '@tes/store';
import { RateLimitRepository } from '../src/store/rate-limit.repository.js';

const MONGO_URL = process.env['MONGO_URL'] ?? 'mongodb://127.0.0.1:27017';
const uniqueName = (prefix: string) => `${prefix}_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

async function main(): Promise<void> {
  const dbName = uniqueName('gw_rlbench');
  const conns: Connection[] = [];
  let commands = 0;
  for (let i = 0; i < 3; i++) {
    const c = mongoose.createConnection(MONGO_URL, {
      dbName,
      monitorCommands: true,
      autoIndex: false,
      autoCreate: false,
      maxPoolSize: 20,
    });
    await c.asPromise();
    c.getClient().on('commandStarted', () => commands++);
    conns.push(c);
  }
  const replicas = conns.map((c) => new RateLimitRepository(c));
  await ensureIndexes(conns[0]!);
  const hits = conns[0]!.collection('rate_hits');
  await hits.createIndex({ account_id: 1, window: 1 });
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
  const lines: string[] = [];
  const measure = async (label: string, n: number, fn: (i: number) => Promise<unknown>, concurrent = false) => {
    const c0 = commands;
    const t0 = process.hrtime.bigint();
    const per: number[] = [];
    if (concurrent) await Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
    else
      for (let i = 0; i < n; i++) {
        const s = process.hrtime.bigint();
        await fn(i);
        per.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const tail = per.length >= 100 ? ` | last 100: ${(per.slice(-100).reduce((a, b) => a + b, 0) / 100).toFixed(2)} ms` : '';
    lines.push(
      `${label}: ${n} requests, ${ms.toFixed(0)} ms wall, ${(ms / n).toFixed(2)} ms/request, ${((commands - c0) / n).toFixed(2)} commands/request${tail}`,
    );
  };
  const insertAndCount = (account: string) => async (i: number) => {
    await hits.insertOne({ _id: `${account}:${i}`, account_id: account, window: 1 } as never);
    return hits.countDocuments({ account_id: account, window: 1 });
  };

  let a = uniqueName('acct');
  await measure('insert+count, sequential, k=1..100', 100, insertAndCount(a));
  a = uniqueName('acct');
  await measure('insert+count, sequential, k=1..1000', 1000, insertAndCount(a));
  a = uniqueName('acct');
  await measure('insert+count, 300 concurrent', 300, insertAndCount(a), true);

  a = uniqueName('acct');
  await measure('tickets, 1 replica, sequential, k=1..1000', 1000, () => replicas[0]!.acquire(a, 1000, now));
  a = uniqueName('acct');
  await measure('tickets, 3 replicas round robin, sequential, k=1..1000', 1000, (i) => replicas[i % 3]!.acquire(a, 1000, now));
  await measure('tickets, refused (window full), 3 replicas', 300, (i) => replicas[i % 3]!.acquire(a, 1000, now));
  a = uniqueName('acct');
  await measure('tickets, 300 concurrent over 3 replicas (limit 1000)', 300, (i) => replicas[i % 3]!.acquire(a, 1000, now), true);
  a = uniqueName('acct');
  await measure('tickets, 1500 concurrent over 3 replicas (limit 1000)', 1500, (i) => replicas[i % 3]!.acquire(a, 1000, now), true);

  process.stdout.write(`\n${lines.join('\n')}\n`);
  await conns[0]!.dropDatabase();
  await Promise.all(conns.map((c) => c.close()));
}

await main();
