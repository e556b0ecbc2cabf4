import { createHmac } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { generate } from 'selfsigned';
import { connect } from 'amqplib';
import { MongoClient } from 'mongodb';
import { closedLoop, openLoad, summarize, type LatencySummary } from './load.js';
import { keepAliveClient } from './http-client.js';

/** What the same machine does with no service logic: the denominators of every ratio. */
export interface Ceilings {
  https_hello_rps: number;
  https_hello_latency_500rps: LatencySummary;
  rabbitmq_confirmed_roundtrip_msgs_per_s: number;
  db_inserts_per_s: number;
  db_updates_per_s: number;
  db_find_by_id_per_s: number;
  /**
   * One core's speed with no I/O: how often per second it parses, re-serializes and signs a
   * task-sized JSON document (absent in reports made before 2026-11-25 evening). The same code
   * runs slower or faster as the machine's host does, so it says whether two runs' machines compare.
   */
  cpu_work_units_per_s?: number;
}

/** Parse + stringify + HMAC-SHA256 of a 1 KB task document, as many times as fit in `durationMs` on this core. */
export function cpuWorkUnits(durationMs: number): number {
  const doc = JSON.stringify({
    id: 'task_01JD0000000000000000000000',
    status: 'completed',
    tool: 'sandbox',
    created_at: new Date(0).toISOString(),
    metadata: { customer: 'x'.repeat(64), tags: Array.from({ length: 16 }, (_, i) => `tag-${i}`) },
    result: { output: 'y'.repeat(512), steps: Array.from({ length: 8 }, (_, i) => ({ n: i, ok: true })) },
  });
  let units = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < durationMs) {
    for (let i = 0; i < 100; i++)
      createHmac('sha256', 'k')
        .update(JSON.stringify(JSON.parse(doc)))
        .digest('hex');
    units += 100;
  }
  return Math.round((units * 1000) / (performance.now() - t0));
}

export async function httpsHello(durationMs: number): Promise<Pick<Ceilings, 'https_hello_rps' | 'https_hello_latency_500rps'>> {
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
  const app = express();
  app.use(express.json());
  app.post('/hello', (_req, res) => {
    res.status(201).json({ hello: 'world' });
  });
  const server = https.createServer({ cert: pems.cert, key: pems.private }, app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hello`;
  const client = keepAliveClient(64);
  const body = JSON.stringify({ prompt: 'x' });
  const rps = await closedLoop(32, durationMs, () => client.request('POST', url, {}, body));
  const open = await openLoad({
    ratePerSec: 500,
    durationMs,
    warmupMs: 1000,
    fire: async () => String((await client.request('POST', url, {}, body)).status),
  });
  client.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  return { https_hello_rps: Math.round(rps), https_hello_latency_500rps: summarize(open.latenciesMs) };
}

/** Publish with confirms and consume with acks, many in flight: messages per second end to end. */
export async function rabbitRoundTrip(amqpUrl: string, count: number): Promise<number> {
  const conn = await connect(amqpUrl);
  const pub = await conn.createConfirmChannel();
  const sub = await conn.createChannel();
  const q = `bench.ceiling.${process.pid}.${Date.now()}`;
  await pub.assertQueue(q, { durable: true, autoDelete: false });
  await sub.prefetch(500);
  let received = 0;
  const t0 = performance.now();
  const allIn = new Promise<void>((resolve) => {
    void sub.consume(q, (m) => {
      if (!m) return;
      sub.ack(m);
      if (++received === count) resolve();
    });
  });
  const payload = Buffer.from(JSON.stringify({ id: 'msg_x', type: 'bench', data: { pad: 'x'.repeat(300) } }));
  const window = 1000;
  let pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    pending.push(
      new Promise((res, rej) =>
        pub.sendToQueue(q, payload, { persistent: true }, (err: unknown) =>
          err ? rej(err instanceof Error ? err : new Error('publish not confirmed')) : res(),
        ),
      ),
    );
    if (pending.length >= window) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  await allIn;
  const rate = count / ((performance.now() - t0) / 1000);
  await pub.deleteQueue(q);
  await conn.close();
  return Math.round(rate);
}

export async function dbRates(
  mongoUrl: string,
  count: number,
): Promise<Pick<Ceilings, 'db_inserts_per_s' | 'db_updates_per_s' | 'db_find_by_id_per_s'>> {
  const client = await MongoClient.connect(mongoUrl, { maxPoolSize: 32 });
  const db = client.db(`bench_ceiling_${Date.now()}`);
  const col = db.collection<{ _id: string; n: number; pad: string }>('docs');
  const concurrency = 16;
  const run = async (op: (i: number) => Promise<unknown>) => {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) await op(next++);
      }),
    );
    return Math.round(count / ((performance.now() - t0) / 1000));
  };
  const inserts = await run((i) => col.insertOne({ _id: `d${i}`, n: i, pad: 'x'.repeat(300) }));
  const updates = await run((i) => col.updateOne({ _id: `d${i}` }, { $set: { n: -i } }));
  const finds = await run((i) => col.findOne({ _id: `d${i}` }));
  await db.dropDatabase();
  await client.close();
  return { db_inserts_per_s: inserts, db_updates_per_s: updates, db_find_by_id_per_s: finds };
}
