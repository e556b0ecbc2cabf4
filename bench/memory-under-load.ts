/**
 * `pnpm bench:memory`: each service's memory under a sustained load, beside its idle figure
 * (bench/idle-memory.ts measures idle only). Starts the stack as `pnpm bench` does, reads each
 * service's RSS idle, then sends single-step tasks at RATE per second (open model) for MINUTES
 * minutes, reading RSS every SAMPLE_SECONDS. Prints idle, the start of the load (once
 * START_SECONDS of it have passed: heaps have grown to their working size), every 5 minutes, the
 * end, once the backlog is done (drained), and the highest reading; growth between the start and
 * the end (and a drained figure above the start) is what a leak shows as.
 * Also counts the tasks whose webhook arrived, so the figures are those of a stack doing the work.
 *
 *   RATE=30 MINUTES=10 pnpm bench:memory
 *
 * Runs on a FerretDB of its own (bench/lib/own-database.ts: other clients' schema changes on the
 * machine's shared server stall every task); BENCH_SHARED_DB=1 runs on the shared one.
 */
import { removeStack, startStack } from '@tes/testing';
import { benchAccountKeys } from './lib/accounts.js';
import { keepAliveClient } from './lib/http-client.js';
import { openLoad } from './lib/load.js';
import { memoryMb, type MemoryMb } from './lib/proc.js';
import { startWebhookReceiver } from './lib/receiver.js';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { benchDatabase } from './lib/own-database.js';

const RATE = Number(process.env['RATE'] ?? 30);
const MINUTES = Number(process.env['MINUTES'] ?? 10);
const SAMPLE_MS = Number(process.env['SAMPLE_SECONDS'] ?? 10) * 1000;
const START_MS = Number(process.env['START_SECONDS'] ?? 30) * 1000;
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`memory: ${msg}\n`);

const db = await benchDatabase();
log(`database: ${db.describe}`);
const receiver = await startWebhookReceiver();
const stack = await startStack({
  mongoUrl: db.mongoUrl,
  nodeArgs: NODE_ARGS,
  env: { '*': { LOG_LEVEL: 'warn' }, gateway: await gatewayTlsEnv() },
});
try {
  const keys = await benchAccountKeys(stack, 'mem', `${receiver.base}/ok/main`);
  await sleep(5000); // as bench/idle-memory.ts: the boot's allocations settled
  const idle = memoryMb(stack);
  const samples: { at_s: number; mb: Record<string, MemoryMb>; completed: number }[] = [];
  const t0 = performance.now();
  const sampler = setInterval(() => {
    samples.push({ at_s: Math.round((performance.now() - t0) / 1000), mb: memoryMb(stack), completed: receiver.completeAt.size });
    const last = samples[samples.length - 1];
    if (last && last.at_s % 60 < SAMPLE_MS / 1000) log(`${last.at_s} s: ${last.completed} tasks complete`);
  }, SAMPLE_MS);
  const client = keepAliveClient(256);
  const body = '{"prompt":"Echo \\"memory\\""}';
  const load = await openLoad({
    ratePerSec: RATE,
    durationMs: MINUTES * 60_000,
    warmupMs: 0,
    fire: async (i) => {
      const r = await client.request('POST', `${stack.baseUrl}/tasks`, { authorization: `Bearer ${keys[i % keys.length] ?? ''}` }, body);
      if (r.status !== 201) throw new Error(`create answered ${r.status}`);
      return '201';
    },
  });
  clearInterval(sampler);
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && receiver.completeAt.size < load.sent - load.errors) await sleep(200);
  client.close();
  await sleep(10_000); // the backlog gone: what the heaps keep once the work is done
  const drained = memoryMb(stack);

  // The reading nearest each moment: the load's start, every 5 minutes, its end.
  const at = (s: number) => samples.reduce((best, x) => (Math.abs(x.at_s - s) < Math.abs(best.at_s - s) ? x : best));
  const moments = [START_MS / 1000, ...Array.from({ length: Math.floor(MINUTES / 5) }, (_, k) => (k + 1) * 300)];
  if (!moments.includes(MINUTES * 60)) moments.push(MINUTES * 60);
  const picked = moments.map(at);
  console.log(
    `${RATE} tasks/s for ${MINUTES} min: ${load.sent} sent, ${load.errors} creates failed, ${receiver.completeAt.size} webhooks received; RSS (anonymous = heaps) in MB, node args: ${NODE_ARGS.join(' ') || '(none)'}`,
  );
  const rows: Record<string, Record<string, string>> = {};
  for (const name of stack.procs.keys()) {
    const fmt = (m: MemoryMb | undefined) => (m ? `${m.rss} (${m.anon})` : 'n/a');
    const row: Record<string, string> = { idle: fmt(idle[name]) };
    for (const p of picked) row[`+${p.at_s} s`] = fmt(p.mb[name]);
    row['drained'] = fmt(drained[name]);
    row['highest'] = String(Math.max(...samples.map((x) => x.mb[name]?.rss ?? NaN)));
    const first = picked[0]?.mb[name]?.rss ?? NaN;
    const end = picked[picked.length - 1]?.mb[name]?.rss ?? NaN;
    row['end - start'] = (Math.round((end - first) * 10) / 10).toString();
    rows[name] = row;
  }
  console.table(rows);
  console.log('create answers:', load.statuses);
} finally {
  await stack.stopAll();
  await removeStack(stack);
  await receiver.close();
  await db.close();
}
