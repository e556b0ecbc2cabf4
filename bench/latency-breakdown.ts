/**
 * Where a task's end-to-end time goes: runs single-step tasks at a fixed arrival rate (open
 * model) and, once they are done, reads the timestamps each service stored for them, so every
 * hop's share of the latency shows (same machine clock everywhere, millisecond precision):
 *
 *   scheduled send → gateway asks the orchestrator (the task's created_at, stamped by the gateway)
 *   → orchestrator takes it (started_at, stamped just before its insert) → executor finishes the step (step_runs.finished_at, its
 *   trace's duration before it) → orchestrator completes the task (completed_at) → dispatcher
 *   stores the event (events.received_at) → attempt starts (delivery_attempts.started_at) →
 *   receiver has it. Also: the create answer as the client saw it.
 *
 *   RATE=50 SECONDS=20 WARMUP_SECONDS=10 pnpm exec tsx bench/latency-breakdown.ts
 *
 * Stall tracing (docs/performance.md "Stall trace"): the SLOWEST tasks are printed with every
 * hop, and beside each the signals recorded during its longest hop (lib/stall-signals.ts): the
 * services' database commands slower than SLOW_COMMAND_MS (default 100; DB_SLOW_COMMAND_MS, the
 * pool wait apart), their GC pauses (`node --trace-gc`; TRACE_GC=0 leaves it off), a probe's own
 * updates on the MongoDB-wire server, and per second PostgreSQL's activity and autovacuum,
 * FerretDB's schema changes (by any client of the server), RabbitMQ's connection states
 * and the machine's load. A summary says which signal the slow tasks share.
 *
 *   RATE=50 SECONDS=60 SLOWEST=15 pnpm bench:stall
 *
 * Runs on a FerretDB of its own (bench/lib/own-database.ts), so the schema changes of other
 * clients no longer reach it and the signals above are the stack's own; BENCH_SHARED_DB=1 runs on
 * the machine's shared server (what the stall trace of 2026-11-28 measured).
 */
import { MongoClient } from 'mongodb';
import { removeStack, stackDatabase, startStack } from '@tes/testing';
import { benchAccountKeys } from './lib/accounts.js';
import { keepAliveClient } from './lib/http-client.js';
import { openLoad, summarize } from './lib/load.js';
import { startWebhookReceiver } from './lib/receiver.js';
import { printStallReport, type TaskHops } from './lib/stall-report.js';
import { recordStallSignals, stackAutovacuum } from './lib/stall-signals.js';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { benchDatabase } from './lib/own-database.js';

const RATE = Number(process.env['RATE'] ?? 50);
const SECONDS = Number(process.env['SECONDS'] ?? 20);
const WARMUP_MS = Number(process.env['WARMUP_SECONDS'] ?? 10) * 1000;
const SLOW_COMMAND_MS = process.env['SLOW_COMMAND_MS'] ?? '100';
const TRACE_GC = process.env['TRACE_GC'] !== '0';

interface Times {
  scheduled: number;
  answered?: number;
}

const server = await benchDatabase();
console.log(`database: ${server.describe}`);
const receiver = await startWebhookReceiver();
const stack = await startStack({
  mongoUrl: server.mongoUrl,
  env: { '*': { LOG_LEVEL: 'warn', DB_SLOW_COMMAND_MS: SLOW_COMMAND_MS }, gateway: await gatewayTlsEnv() },
  nodeArgs: TRACE_GC ? ['--trace-gc'] : [],
});
const mongo = await MongoClient.connect(server.mongoUrl);
const signals = recordStallSignals(stack, server);
try {
  const keys = await benchAccountKeys(stack, 'hops', `${receiver.base}/ok/main`);
  const client = keepAliveClient(256);
  await new Promise((r) => setTimeout(r, 2000));
  const tasks = new Map<string, Times>();
  const load = await openLoad({
    ratePerSec: RATE,
    durationMs: SECONDS * 1000,
    warmupMs: WARMUP_MS,
    fire: async (i, scheduled) => {
      const r = await client.request(
        'POST',
        `${stack.baseUrl}/tasks`,
        { authorization: `Bearer ${keys[i % keys.length] ?? ''}` },
        '{"prompt":"Echo \\"hops\\""}',
      );
      if (r.status !== 201) throw new Error(`create answered ${r.status}`);
      if (i >= (WARMUP_MS / 1000) * RATE) {
        tasks.set((JSON.parse(r.body) as { id: string }).id, { scheduled: performance.timeOrigin + scheduled, answered: Date.now() });
      }
      return '201';
    },
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && [...tasks.keys()].some((id) => !receiver.completeAt.has(id)))
    await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 1500)); // the dispatcher's final inserts

  const ids = [...tasks.keys()];
  const db = (s: Parameters<typeof stackDatabase>[1]) => mongo.db(stackDatabase(stack.namespace, s));
  const orch = new Map(
    (
      await db('task-orchestrator')
        .collection('tasks')
        .find({ _id: { $in: ids } } as never)
        .toArray()
    ).map((d) => [String(d._id), d]),
  );
  const steps = new Map(
    (
      await db('executor')
        .collection('step_runs')
        .find({ task_id: { $in: ids } })
        .toArray()
    ).map((d) => [String(d['task_id']), d]),
  );
  const events = new Map(
    (
      await db('webhook-dispatcher')
        .collection('events')
        .find({ task_id: { $in: ids }, event: 'task.complete' })
        .toArray()
    ).map((d) => [String(d['task_id']), d]),
  );
  const attempts = new Map(
    (
      await db('webhook-dispatcher')
        .collection('delivery_attempts')
        .find({ task_id: { $in: ids }, attempt: 1 })
        .toArray()
    ).map((d) => [String(d['event_id']), d]),
  );

  const hops: Record<string, number[]> = {
    'scheduled → gateway asks orchestrator': [],
    'gateway asks → orchestrator stores task': [],
    'orchestrator stores → executor starts step': [],
    'step runs (trace duration)': [],
    'step finished → orchestrator completes task': [],
    'task complete → dispatcher stores event': [],
    'event stored → attempt starts': [],
    'attempt starts → receiver has it': [],
    'end to end': [],
    'create answered (client)': [],
  };
  const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Date.parse(String(v)));
  let complete = 0;
  const start = Math.min(...[...tasks.values()].map((t) => t.scheduled));
  const slowest: { at_s: number; e2e: number; hops: Record<string, number> }[] = [];
  const spans: TaskHops[] = [];
  for (const [id, t] of tasks) {
    const o = orch.get(id);
    const s = steps.get(id);
    const e = events.get(id);
    const got = receiver.completeAt.get(id);
    if (!o || !s || !e || got === undefined) continue;
    const a = attempts.get(String(e._id));
    complete++;
    const created = ms(o['created_at']);
    const stored = ms(o['started_at']);
    const finished = ms(s['finished_at']);
    const ran = Number((s['trace'] as { duration_ms?: number } | undefined)?.duration_ms ?? 0);
    const done = ms(o['completed_at']);
    const received = ms(e['received_at']);
    const started = a ? ms(a['started_at']) : NaN;
    const mine: Record<string, number> = {};
    const push = (k: string, v: number) => {
      if (!Number.isFinite(v)) return;
      hops[k]?.push(v);
      mine[k] = Math.round(v);
    };
    spans.push({
      id,
      scheduled: t.scheduled,
      received: got,
      hops: [
        ['scheduled → gateway asks orchestrator', t.scheduled, created],
        ['gateway asks → orchestrator stores task', created, stored],
        ['orchestrator stores → executor starts step', stored, finished - ran],
        ['step runs (trace duration)', finished - ran, finished],
        ['step finished → orchestrator completes task', finished, done],
        ['task complete → dispatcher stores event', done, received],
        ['event stored → attempt starts', received, started],
        ['attempt starts → receiver has it', started, got],
      ],
    });
    push('scheduled → gateway asks orchestrator', created - t.scheduled);
    push('gateway asks → orchestrator stores task', stored - created);
    push('orchestrator stores → executor starts step', finished - ran - stored);
    push('step runs (trace duration)', ran);
    push('step finished → orchestrator completes task', done - finished);
    push('task complete → dispatcher stores event', received - done);
    push('event stored → attempt starts', started - received);
    push('attempt starts → receiver has it', got - started);
    push('end to end', got - t.scheduled);
    if (t.answered !== undefined) push('create answered (client)', t.answered - t.scheduled);
    slowest.push({ at_s: Math.round((t.scheduled - start) / 100) / 10, e2e: got - t.scheduled, hops: mine });
  }
  console.log(
    `${RATE} tasks/s for ${SECONDS} s (warm-up ${WARMUP_MS / 1000} s cut) from ${new Date(start).toISOString()}: ${tasks.size} measured, ${complete} with every timestamp; ${load.errors} creates failed (shed or refused: not measured, so an overloaded rate shows here)`,
  );
  console.table(Object.fromEntries(Object.entries(hops).map(([k, v]) => [k, summarize(v)])));
  // The slowest tasks, each with the hop that took longest: a stall shows as several tasks at one moment.
  slowest.sort((a, b) => b.e2e - a.e2e);
  console.table(
    slowest.slice(0, Number(process.env['SLOWEST'] ?? 10)).map((x) => {
      const [hop, ms] = Object.entries(x.hops)
        .filter(([k]) => k !== 'end to end' && k !== 'create answered (client)')
        .sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
      return { 'sent at (s)': x.at_s, 'end to end': Math.round(x.e2e), 'longest hop': hop, 'its ms': ms };
    }),
  );
  client.close();
  await signals.stop();
  printStallReport({
    tasks: spans,
    start,
    signals,
    autovacuum: await stackAutovacuum(stack.namespace, server),
    slowest: Number(process.env['SLOWEST'] ?? 10),
  });
} finally {
  await signals.stop().catch(() => undefined); // the stack is stopped whatever the recorders did
  await mongo.close();
  await stack.stopAll();
  await removeStack(stack);
  await receiver.close();
  await server.close();
}
