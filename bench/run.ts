/**
 * `pnpm bench`: measures the running system under open-model load and reports each
 * figure beside the raw ceilings of the same machine, measured in the same run.
 * BENCH_QUICK=1 shortens every phase (a smoke run, not a report); BENCH_RENDER_FROM=<a run's JSON>
 * only rewrites the report from it.
 *
 * The stack runs on a FerretDB of the bench's own (bench/lib/own-database.ts: other clients' schema
 * changes on the machine's shared server stall every task); BENCH_SHARED_DB=1 runs it on the shared
 * one. The database ceilings and command counts are those of the server the stack uses.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { QUEUES, DEFAULT_PARTITIONS, newId } from '@tes/contracts';
import { createLogger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import { AMQP_URL, removeStack, startStack, type Stack } from '@tes/testing';
import { adminCli } from './lib/admin-cli.js';
import { brokerConnected, publishConfirmed } from './lib/bench-broker.js';
import { cpuWorkUnits, dbRates, httpsHello, rabbitRoundTrip, type Ceilings } from './lib/ceilings.js';
import { keepAliveClient } from './lib/http-client.js';
import { benchAccountKeys } from './lib/accounts.js';
import { startWebhookReceiver } from './lib/receiver.js';
import { cpuMeter, cpuPerTaskMs, isStackProcess, rssMb, type CpuPerTask } from './lib/proc.js';
import { commandCounts, countsSince, dbBoundTasksPerS, perTask } from './lib/db-commands.js';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { benchDatabase, type BenchDatabase } from './lib/own-database.js';
import { median, medianSummary, openLoad, summarize, type LatencySummary } from './lib/load.js';

const QUICK = process.env['BENCH_QUICK'] === '1';
const RUNS = Number(process.env['BENCH_RUNS'] ?? (QUICK ? 1 : 3));
const DURATION_MS = Number(process.env['BENCH_SECONDS'] ?? (QUICK ? 3 : 10)) * 1000;
const WARMUP_MS = QUICK ? 1000 : 2000;
/** Rates (per second) of each phase; the issue's defaults, overridable for a slower database. */
const rates = (name: string, fallback: number[]) => (process.env[name] ? String(process.env[name]).split(',').map(Number) : fallback);
const CREATE_RATES = rates('BENCH_CREATE_RATES', [50, 200, 500]);
const GET_RATE = rates('BENCH_GET_RATE', [500])[0] ?? 500;
const E2E_RATES = rates('BENCH_E2E_RATES', [50, 200]);
const SUSTAINED_RATES = rates('BENCH_SUSTAINED_RATES', QUICK ? [100, 200] : [100, 200, 300, 400]);
const FAN_EVENTS = Number(process.env['BENCH_FAN_EVENTS'] ?? (QUICK ? 1000 : 5000));
/** Extra Node.js flags for every service process (compare e.g. --max-semi-space-size values). */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
/** How long the stack stays untouched before its idle memory is read. */
const IDLE_SETTLE_MS = QUICK ? 2000 : 15_000;
/** After a phase, how long the system may take to finish its backlog before the next phase starts. */
const SETTLE_MAX_MS = Number(process.env['BENCH_SETTLE_SECONDS'] ?? 300) * 1000;
/** The hand-written part of docs/performance.md, kept when the bench rewrites the figures above it. */
const HAND_WRITTEN = '\n## Reading these figures';
/** What `pnpm admin accounts create` prints. */
interface NewAccount {
  account_id: string;
  api_keys: { test: string; live: string };
}

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

/**
 * Messages waiting in the stack's queues, read once the bench's broker connection is up (it
 * recovers by itself after a drop); undefined when a queue could not be read (not a zero).
 */
async function queueBacklog(broker: Broker): Promise<number | undefined> {
  const names: string[] = [QUEUES.executorSteps.name, QUEUES.dispatcherTaskEvents.name];
  for (let p = 0; p < DEFAULT_PARTITIONS; p++) names.push(QUEUES.orchestratorPartition(p).name, QUEUES.gatewayTaskEvents(p).name);
  await brokerConnected(broker);
  let total = 0;
  for (const n of names) {
    const depth = await broker.queueDepth(n).catch(() => undefined);
    if (depth === undefined) return undefined;
    total += depth;
  }
  return total;
}

/** Below this share of one core, the stack (services, database, broker) counts as idle; idle pollers use about 0.07. */
const QUIET_CPU_SHARE = 0.3;

/** The share of one core the stack used over the next `ms`. */
async function stackCpuShare(stack: Stack, ms: number): Promise<number> {
  const meter = cpuMeter(stack);
  await new Promise((r) => setTimeout(r, ms));
  let seconds = 0;
  for (const [group, s] of meter.stop()) if (isStackProcess(group)) seconds += s;
  return seconds / (ms / 1000);
}

/**
 * Waits until every queue of the stack is empty, the webhooks stopped arriving for a while, and
 * the stack's CPU is back near idle (the database may still be vacuuming what a phase left), so
 * one phase's aftermath does not land on the next phase's figures. Returns the seconds waited.
 */
async function settle(broker: Broker, deliveries: () => number, stack: Stack): Promise<number> {
  const t0 = Date.now();
  let quietSince = Date.now();
  let seen = deliveries();
  while (Date.now() - t0 < SETTLE_MAX_MS) {
    await new Promise((r) => setTimeout(r, 500));
    const now = deliveries();
    if (now !== seen || (await queueBacklog(broker)) !== 0) {
      seen = now;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= 1500 && (await stackCpuShare(stack, 1000)) < QUIET_CPU_SHARE) break;
  }
  return Math.round((Date.now() - t0) / 100) / 10;
}

type CreateLatency = LatencySummary & { errors: number; error_kinds?: Record<string, number>; error_latency_ms?: LatencySummary };

/** "create errors N, " (reports made before creates could be shed have no such count). */
const createErrors = (v: { create_errors?: number }) => (v.create_errors === undefined ? '' : `create errors ${v.create_errors}, `);

async function main(): Promise<void> {
  const db = await benchDatabase();
  try {
    await measure(db);
  } finally {
    await db.close();
  }
}

async function measure(db: BenchDatabase): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadAtStart = os.loadavg().map((l) => Math.round(l * 100) / 100);
  log(`machine: ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}; quick=${QUICK}`);
  log(`database: ${db.describe}`);

  log('ceilings: HTTPS hello world, RabbitMQ confirmed round trip, database rates');
  const hello = await httpsHello(QUICK ? 2000 : 5000);
  const ceilings: Ceilings = {
    ...hello,
    rabbitmq_confirmed_roundtrip_msgs_per_s: await rabbitRoundTrip(AMQP_URL, QUICK ? 5000 : 20_000),
    ...(await dbRates(db.mongoUrl, QUICK ? 1000 : 4000)),
    cpu_work_units_per_s: cpuWorkUnits(QUICK ? 1000 : 3000),
  };
  log(JSON.stringify(ceilings));

  const receiver = await startWebhookReceiver();
  const stack = await startStack({
    mongoUrl: db.mongoUrl,
    nodeArgs: NODE_ARGS,
    env: {
      '*': { LOG_LEVEL: 'warn' },
      // As in production: the gateway is given its certificate (it generates one only for development).
      gateway: await gatewayTlsEnv(),
      'webhook-dispatcher': { WEBHOOK_RETRY_SCHEDULE_MS: '500,500,500,500', POLL_INTERVAL_MS: '100' },
    },
  });
  const results: Record<string, unknown> = {};
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const memoryStarted = rssMb(stack);
    // Idle: after a quiet while, once V8's memory reducer has had its chance, as in a real deployment.
    const idleCounts0 = await commandCounts(db.debugUrl);
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    const memoryIdle = rssMb(stack);
    const idleCounts1 = await commandCounts(db.debugUrl);
    log(
      `RSS MB 1.5 s after start: ${JSON.stringify(memoryStarted)}; idle after ${IDLE_SETTLE_MS / 1000} s more: ${JSON.stringify(memoryIdle)}`,
    );

    const keys = await benchAccountKeys(stack, 'bench', `${receiver.base}/ok/main`);
    let turn = 0;
    const headersFor = () => ({ authorization: `Bearer ${keys[turn++ % keys.length] ?? ''}` });
    const client = keepAliveClient(512);
    const createBody = JSON.stringify({ prompt: 'Echo "bench"' });
    const create = async () => {
      const r = await client.request('POST', `${stack.baseUrl}/tasks`, headersFor(), createBody);
      if (r.status !== 201) {
        const code = (JSON.parse(r.body || '{}') as { error?: { code?: string } }).error?.code ?? '';
        throw new Error(`create answered ${r.status} ${code}`.trim());
      }
      return JSON.parse(r.body) as { id: string };
    };
    await create();
    // Its warnings are the bench's to show: a lost connection and its recovery (publishes retry meanwhile).
    const broker = new Broker({
      url: AMQP_URL,
      source: 'bench',
      logger: createLogger({ service: 'bench', level: 'warn' }),
      namespace: stack.namespace,
      connectionName: `bench ${process.pid}`,
    });
    await broker.connect();
    const settled = async (after: string) => {
      const waited = await settle(broker, () => receiver.deliveries.length, stack);
      log(`settled after ${after} in ${waited} s`);
    };

    // 1. Create latency.
    const createLatency: Record<string, CreateLatency> = {};
    for (const rate of CREATE_RATES) {
      const runs: LatencySummary[] = [];
      let errors = 0;
      const errorKinds: Record<string, number> = {};
      const errorLatencies: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        const r = await openLoad({
          ratePerSec: rate,
          durationMs: DURATION_MS,
          warmupMs: WARMUP_MS,
          fire: async () => (await create(), '201'),
        });
        runs.push(summarize(r.latenciesMs));
        errors += r.errors;
        errorLatencies.push(...r.errorLatenciesMs);
        for (const [k, n] of Object.entries(r.statuses))
          if (k.startsWith('error: ')) errorKinds[k.slice(7)] = (errorKinds[k.slice(7)] ?? 0) + n;
        await settled(`create @${rate}/s`);
      }
      createLatency[`${rate}/s`] = {
        ...medianSummary(runs),
        errors,
        ...(errors > 0 ? { error_kinds: errorKinds, error_latency_ms: summarize(errorLatencies) } : {}),
      };
      log(`create @${rate}/s: ${JSON.stringify(createLatency[`${rate}/s`])}`);
    }
    results['create_latency_ms'] = createLatency;

    // 2. Get latency.
    const knownKey = keys[0] ?? '';
    const known = await (async () => {
      const r = await client.request('POST', `${stack.baseUrl}/tasks`, { authorization: `Bearer ${knownKey}` }, createBody);
      return JSON.parse(r.body) as { id: string };
    })();
    const getRuns: LatencySummary[] = [];
    let getErrors = 0;
    for (let run = 0; run < RUNS; run++) {
      const r = await openLoad({
        ratePerSec: GET_RATE,
        durationMs: DURATION_MS,
        warmupMs: WARMUP_MS,
        fire: async () =>
          String((await client.request('GET', `${stack.baseUrl}/tasks/${known.id}`, { authorization: `Bearer ${knownKey}` })).status),
      });
      getRuns.push(summarize(r.latenciesMs));
      getErrors += r.errors;
    }
    results['get_latency_ms'] = { [`${GET_RATE}/s`]: { ...medianSummary(getRuns), errors: getErrors } };
    await settled('get');
    log(`get @${GET_RATE}/s: ${JSON.stringify(results['get_latency_ms'])}`);

    // 3 and 4. End to end: scheduled create → signed task.complete received.
    let e2eCreated = 0;
    const endToEnd = async (rate: number) => {
      const scheduledAt = new Map<string, number>();
      const r = await openLoad({
        ratePerSec: rate,
        durationMs: DURATION_MS,
        warmupMs: WARMUP_MS,
        fire: async (_i, scheduled) => {
          const t = await create();
          e2eCreated++;
          if (scheduled - 0 >= 0) scheduledAt.set(t.id, performance.timeOrigin + scheduled);
          return '201';
        },
      });
      const backlogAtEnd = (await queueBacklog(broker)) ?? NaN;
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && [...scheduledAt.keys()].some((id) => !receiver.completeAt.has(id)))
        await new Promise((res) => setTimeout(res, 100));
      const lat: number[] = [];
      const webhookLag: number[] = [];
      let missing = 0;
      const warmupCut = Math.floor((WARMUP_MS / 1000) * rate);
      [...scheduledAt.entries()].slice(warmupCut).forEach(([id, at]) => {
        const got = receiver.completeAt.get(id);
        if (got === undefined) missing++;
        else lat.push(got - at);
        const lag = receiver.afterStateChangeMs.get(id);
        if (lag !== undefined && Number.isFinite(lag)) webhookLag.push(lag);
      });
      // Spec 6.3.6: the webhook's first attempt, from the task's state change (the event's timestamp) to its arrival.
      const webhook = summarize(webhookLag);
      return { ...summarize(lat), missing, create_errors: r.errors, backlog_at_end: backlogAtEnd, webhook };
    };
    const e2e: Record<string, unknown> = {};
    for (const [i, rate] of E2E_RATES.entries()) {
      const runs = [];
      // The lowest rate's runs, settled, also count the database commands and the CPU time per task.
      const counted =
        i === 0 ? { before: await commandCounts(db.debugUrl), cpu: cpuMeter(stack), created: e2eCreated, t0: Date.now() } : undefined;
      for (let run = 0; run < RUNS; run++) {
        runs.push(await endToEnd(rate));
        await settled(`e2e @${rate}/s`);
      }
      const after = counted && (await commandCounts(db.debugUrl));
      if (counted) {
        // Gross: the idle stack's own use is included. Right after the start (the only quiet window
        // measured) the database is still building indexes, which no steady state has to pay.
        const cpu = cpuPerTaskMs(counted.cpu.stop(), e2eCreated - counted.created);
        results['cpu_ms_per_task'] = cpu;
        log(`CPU ms per task: ${JSON.stringify(cpu)}`);
      }
      if (counted?.before && after && idleCounts0 && idleCounts1) {
        const commands = perTask(
          countsSince(after, counted.before),
          e2eCreated - counted.created,
          Date.now() - counted.t0,
          countsSince(idleCounts1, idleCounts0),
          IDLE_SETTLE_MS,
        );
        results['db_commands_per_task'] = commands;
        results['db_bound_tasks_per_s'] = dbBoundTasksPerS(commands, ceilings);
        log(
          `database commands per task: ${JSON.stringify(commands)}; the database alone bounds at ${String(results['db_bound_tasks_per_s'])} tasks/s`,
        );
      }
      e2e[`${rate}/s`] = {
        ...medianSummary(runs),
        missing: Math.max(...runs.map((x) => x.missing)),
        create_errors: runs.reduce((n, x) => n + x.create_errors, 0),
        backlog_at_end: median(runs.map((x) => x.backlog_at_end)),
        webhook_after_state_change: medianSummary(runs.map((x) => x.webhook)),
      };
      log(`e2e @${rate}/s: ${JSON.stringify(e2e[`${rate}/s`])}`);
    }
    results['end_to_end_ms'] = e2e;

    const sustained: Record<string, unknown> = {};
    let best = 0;
    for (const rate of SUSTAINED_RATES) {
      // Several runs, as every figure: one 10 s run has so few samples that its p99 is its slowest task.
      const runs = [];
      for (let run = 0; run < RUNS; run++) {
        runs.push(await endToEnd(rate));
        await settled(`sustained @${rate}/s`);
      }
      const r = {
        ...medianSummary(runs),
        missing: Math.max(...runs.map((x) => x.missing)),
        // A create refused (shed or timed out) is a task the rate did not carry.
        create_errors: runs.reduce((n, x) => n + x.create_errors, 0),
        backlog_at_end: median(runs.map((x) => x.backlog_at_end)),
        p99_of_runs: runs.map((x) => x.p99),
      };
      const ok = r.p99 <= 250 && r.missing === 0 && r.create_errors === 0 && r.backlog_at_end < rate;
      sustained[`${rate}/s`] = { ...r, ok };
      log(`sustained @${rate}/s: ${JSON.stringify(sustained[`${rate}/s`])}`);
      if (!ok) break;
      best = rate;
    }
    results['sustained'] = { highest_ok_rate_per_s: best, steps: sustained };
    results['memory_after_load_mb'] = rssMb(stack);

    // 5. Webhook fan-out: task.event messages straight to the dispatcher, many endpoints.
    const fanout = async (label: string, pathOf: (i: number) => string, events: number) => {
      const accounts: string[] = [];
      const paths: string[] = [];
      const setupT0 = Date.now();
      for (let i = 0; i < 20; i++) {
        const a = (await adminCli(['accounts', 'create', '--name', `fan${i}`], stack.adminEnv)) as NewAccount;
        const path = `${pathOf(i)}/${label}-${i}`;
        await adminCli(['webhooks', 'set', '--account', a.account_id, '--env', 'test', '--url', `${receiver.base}${path}`], stack.adminEnv);
        accounts.push(a.account_id);
        paths.push(path);
      }
      log(`fan-out ${label}: 20 accounts and their webhooks set in ${Math.round((Date.now() - setupT0) / 100) / 10} s`);
      const sentAt = new Map<string, number>();
      const before = receiver.deliveries.length;
      const t0 = Date.now();
      let retried = 0;
      await Promise.all(
        Array.from({ length: events }, async (_, i) => {
          const acct = accounts[i % accounts.length] ?? '';
          const taskId = newId('task');
          const now = new Date().toISOString();
          sentAt.set(taskId, Date.now());
          retried += await publishConfirmed(broker, () =>
            broker.publish(
              'task.event',
              {
                kind: 'completed',
                version: 1,
                task: {
                  id: taskId,
                  account_id: acct,
                  environment: 'test',
                  user_id: null,
                  status: 'complete',
                  tool: 'text',
                  metadata: {},
                  created_at: now,
                  completed_at: now,
                  result: { text: 'fan' },
                },
              },
              { partitionKey: acct, messageId: `evt_${taskId}_1` },
            ),
          );
        }),
      );
      if (retried > 0) log(`fan-out ${label}: ${retried} publishes sent again after the broker connection dropped`);
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && receiver.deliveries.length - before < events) await new Promise((res) => setTimeout(res, 50));
      const got = receiver.deliveries.slice(before);
      const healthy = got.filter((d) => d.path.startsWith('/ok/'));
      const lat = healthy.map((d) => d.at - (sentAt.get(d.taskId) ?? d.at));
      const last = got.reduce((m, d) => Math.max(m, d.at), t0);
      return {
        events,
        delivered: got.length,
        deliveries_per_s: Math.round(got.length / ((last - t0) / 1000)),
        healthy_latency_ms: summarize(lat),
      };
    };
    const fanEvents = FAN_EVENTS;
    const allHealthy = await fanout('healthy', () => '/ok', fanEvents);
    log(`fan-out healthy: ${JSON.stringify(allHealthy)}`);
    const mixed = await fanout('mixed', (i) => (i < 2 ? '/slow' : i < 6 ? '/fail-once' : '/ok'), fanEvents);
    log(`fan-out mixed: ${JSON.stringify(mixed)}`);
    results['webhook_fanout'] = {
      all_healthy: allHealthy,
      mixed_10pct_slow_20pct_fail_once: mixed,
      healthy_p99_ratio: Math.round((mixed.healthy_latency_ms.p99 / allHealthy.healthy_latency_ms.p99) * 100) / 100,
    };
    results['memory_after_start_mb'] = memoryStarted;
    results['memory_idle_mb'] = memoryIdle;
    client.close();
    await broker.close();
  } finally {
    await stack.stopAll();
    await removeStack(stack);
    await receiver.close();
  }

  const report = {
    started_at: startedAt,
    load_average: { at_start: loadAtStart, at_end: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    quick: QUICK,
    settings: { env: benchEnv(), runs: RUNS, warmup_s: WARMUP_MS / 1000, measured_s: DURATION_MS / 1000, own_database: db.own },
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model, memory_gib: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    ceilings,
    results,
  };
  mkdirSync('bench/results', { recursive: true });
  // A smoke run never replaces the report (or the JSON beside it).
  const [json, target] = QUICK
    ? ['bench/results/quick.json', 'bench/results/quick.md']
    : ['bench/results/latest.json', 'docs/performance.md'];
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(target, renderMarkdown(report) + handWritten(target));
  log(`report written: ${json} and ${target}`);
}

async function rerender(from: string): Promise<void> {
  const report = JSON.parse(readFileSync(from, 'utf8')) as Parameters<typeof renderMarkdown>[0];
  const target = report.quick ? 'bench/results/quick.md' : 'docs/performance.md';
  writeFileSync(target, renderMarkdown(report) + handWritten(target));
  log(`report rewritten from ${from}: ${target}`);
}

/** The hand-written analysis at the end of the previous report, if any: the bench rewrites only the figures. */
function handWritten(file: string): string {
  let old = '';
  try {
    old = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const at = old.indexOf(HAND_WRITTEN);
  return at < 0 ? '' : old.slice(at);
}

function benchEnv(): string {
  const set = Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_') && k !== 'BENCH_RENDER_FROM');
  return set.length ? set.map(([k, v]) => `\`${k}=${v ?? ''}\``).join(' ') : 'the default settings';
}

function renderMarkdown(report: {
  started_at: string;
  load_average: { at_start: number[]; at_end: number[] };
  quick: boolean;
  settings?: { env: string; runs: number; warmup_s: number; measured_s: number; own_database?: boolean };
  machine: Record<string, unknown>;
  ceilings: Ceilings;
  results: Record<string, unknown>;
}): string {
  const c = report.ceilings;
  const r = report.results as {
    create_latency_ms: Record<string, CreateLatency>;
    get_latency_ms: Record<string, LatencySummary & { errors: number }>;
    end_to_end_ms: Record<
      string,
      LatencySummary & { missing: number; create_errors?: number; backlog_at_end: number; webhook_after_state_change?: LatencySummary }
    >;
    sustained: {
      highest_ok_rate_per_s: number;
      steps: Record<
        string,
        LatencySummary & { ok: boolean; missing: number; create_errors?: number; backlog_at_end: number; p99_of_runs?: number[] }
      >;
    };
    webhook_fanout: {
      all_healthy: { deliveries_per_s: number; healthy_latency_ms: LatencySummary };
      mixed_10pct_slow_20pct_fail_once: { deliveries_per_s: number; healthy_latency_ms: LatencySummary };
      healthy_p99_ratio: number;
    };
    db_commands_per_task?: Record<string, number>;
    db_bound_tasks_per_s?: number;
    cpu_ms_per_task?: CpuPerTask;
    memory_after_start_mb?: Record<string, number>;
    memory_idle_mb: Record<string, number>;
    memory_after_load_mb: Record<string, number>;
  };
  // Reports written before the settings were kept in the JSON: those of this process.
  const settings = report.settings ?? { env: benchEnv(), runs: RUNS, warmup_s: WARMUP_MS / 1000, measured_s: DURATION_MS / 1000 };
  // Reports written before the bench had a database of its own say nothing of it.
  const own = report.settings?.own_database;
  const whichServer = own === undefined ? '' : own ? ", a server of the bench's own" : ", the machine's shared server";
  const helloP99 = c.https_hello_latency_500rps.p99;
  const cpuList = (byProcess: Record<string, number>, ofStack: boolean) =>
    Object.entries(byProcess)
      .filter(([k]) => isStackProcess(k) === ofStack)
      .sort(([, a], [, b]) => b - a)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const row = (name: string, s: LatencySummary, extra = '') =>
    `| ${name} | ${s.p50} | ${s.p99} | ${s.p999} | ${(s.p99 / helloP99).toFixed(1)}× | ${extra} |`;
  const lines = [
    '# Performance',
    '',
    `Measured by \`pnpm bench\` on ${report.started_at} with ${settings.env} (${report.quick ? 'QUICK smoke run' : `${settings.runs} runs per figure, medians, ${settings.warmup_s} s warm-up discarded, ${settings.measured_s} s measured`}).`,
    `Load average (1, 5, 15 min) of the machine at the start: ${report.load_average.at_start.join(', ')}; at the end: ${report.load_average.at_end.join(', ')} (at the start: anything else running on the machine; at the end: mostly the bench's own load).`,
    `Machine: ${String(report.machine['cores'])} cores (${String(report.machine['cpu'])}), ${String(report.machine['memory_gib'])} GiB, Node ${String(report.machine['node'])}; RabbitMQ and FerretDB (PostgreSQL backend${whichServer}) on the same machine; all five services and the load generator share the two cores.`,
    'Load is open-model: each request leaves at its scheduled time and its latency counts from that time, so queueing is not hidden.',
    '',
    '## Ceilings of this machine (same run)',
    '',
    '| what | figure |',
    '|---|---|',
    `| HTTPS hello world (express, keep-alive, 32 in flight) | ${c.https_hello_rps} req/s; at 500 req/s p50 ${c.https_hello_latency_500rps.p50} ms, p99 ${helloP99} ms |`,
    `| RabbitMQ publish with confirms + consume with acks | ${c.rabbitmq_confirmed_roundtrip_msgs_per_s} msg/s |`,
    `| database inserts / updates / finds by id (16 in flight) | ${c.db_inserts_per_s} / ${c.db_updates_per_s} / ${c.db_find_by_id_per_s} per s |`,
    ...(c.cpu_work_units_per_s === undefined
      ? []
      : [`| one core, no I/O: parse, serialize and sign a 1 KB task document | ${c.cpu_work_units_per_s} per s |`]),
    '',
    '## Latency (ms)',
    '',
    '| scenario | p50 | p99 | p99.9 | p99 vs hello-world p99 | notes |',
    '|---|---|---|---|---|---|',
    ...Object.entries(r.create_latency_ms).map(([k, v]) =>
      row(
        `create @ ${k}`,
        v,
        `errors ${v.errors}${
          v.error_kinds
            ? ` (${Object.entries(v.error_kinds)
                .map(([kind, n]) => `${kind}: ${n}`)
                .join(', ')})`
            : ''
        }${v.error_latency_ms ? `; the errors answered in p50 ${v.error_latency_ms.p50} / p99 ${v.error_latency_ms.p99} ms` : ''}`,
      ),
    ),
    ...Object.entries(r.get_latency_ms).map(([k, v]) => row(`get @ ${k}`, v, `errors ${v.errors}`)),
    ...Object.entries(r.end_to_end_ms).map(([k, v]) =>
      row(
        `end to end (create → signed task.complete received) @ ${k}`,
        v,
        `missing ${v.missing}, ${createErrors(v)}backlog at end ${v.backlog_at_end}`,
      ),
    ),
    ...Object.entries(r.end_to_end_ms).flatMap(([k, v]) =>
      v.webhook_after_state_change
        ? [row(`task.complete webhook received after the state change (spec 6.3.6: < 1 s) @ ${k}`, v.webhook_after_state_change)]
        : [],
    ),
    '',
    '## Highest sustained rate',
    '',
    `Single-step sandbox tasks, median end-to-end p99 of the runs ≤ 250 ms, nothing missing, ${
      Object.values(r.sustained.steps).some((v) => v.create_errors !== undefined) ? 'no create refused, ' : ''
    }backlog under one second of arrivals: **${r.sustained.highest_ok_rate_per_s} tasks/s**.`,
    '',
    ...(r.db_commands_per_task && r.db_bound_tasks_per_s
      ? [
          `Each task cost ${Object.entries(r.db_commands_per_task)
            .map(([k, v]) => `${v} ${k}`)
            .join(
              ', ',
            )} database commands (FerretDB's own counters over the lowest end-to-end rate's runs, less the idle stack's pollers). ` +
            `Priced at this run's measured database ceilings, the database alone bounds the system at **${r.db_bound_tasks_per_s} tasks/s**; ` +
            `the sustained rate is **${((r.sustained.highest_ok_rate_per_s / r.db_bound_tasks_per_s) * 100).toFixed(0)} %** of it (target ≥ 50 % when the database bounds the rate below 300 tasks/s).`,
          '',
        ]
      : ['The database commands per task were not counted (no FerretDB `/debug/metrics` at `FERRETDB_DEBUG_URL`).', '']),
    ...(r.cpu_ms_per_task
      ? [
          `Each task cost **${r.cpu_ms_per_task.stack} ms of CPU** over the same runs, at the lowest rate (${cpuList(r.cpu_ms_per_task.by_process, true)} ms; ` +
            `not counted: ${cpuList(r.cpu_ms_per_task.by_process, false)} ms; from /proc, the idle stack's own pollers included). ` +
            `At that cost the ${String(report.machine['cores'])} cores would carry at most **${r.cpu_ms_per_task.cpu_bound_tasks_per_s} tasks/s**` +
            (r.sustained.highest_ok_rate_per_s > r.cpu_ms_per_task.cpu_bound_tasks_per_s
              ? `; the sustained rate above is higher, so a task costs less at higher rates (the dispatcher and the rate limiter batch under load; the CPU was metered at the lowest rate only).`
              : `; the sustained rate is ${((r.sustained.highest_ok_rate_per_s / r.cpu_ms_per_task.cpu_bound_tasks_per_s) * 100).toFixed(0)} % of that.`),
          '',
        ]
      : []),
    '| rate | p50 | p99 (median of runs) | p99 of each run | ok |',
    '|---|---|---|---|---|',
    ...Object.entries(r.sustained.steps).map(
      ([k, v]) =>
        `| ${k} | ${v.p50} | ${v.p99} | ${(v.p99_of_runs ?? []).join(', ')} | ${v.ok ? 'yes' : 'no'} (missing ${v.missing}, ${createErrors(v)}backlog ${v.backlog_at_end}) |`,
    ),
    '',
    '## Webhook fan-out (20 endpoints)',
    '',
    `| run | deliveries/s | healthy endpoints p50 / p99 (ms) |`,
    '|---|---|---|',
    `| all healthy | ${r.webhook_fanout.all_healthy.deliveries_per_s} | ${r.webhook_fanout.all_healthy.healthy_latency_ms.p50} / ${r.webhook_fanout.all_healthy.healthy_latency_ms.p99} |`,
    `| 10 % slow (1 s), 20 % failing once | ${r.webhook_fanout.mixed_10pct_slow_20pct_fail_once.deliveries_per_s} | ${r.webhook_fanout.mixed_10pct_slow_20pct_fail_once.healthy_latency_ms.p50} / ${r.webhook_fanout.mixed_10pct_slow_20pct_fail_once.healthy_latency_ms.p99} |`,
    '',
    `Healthy endpoints' p99 in the mixed run is ${r.webhook_fanout.healthy_p99_ratio}× the all-healthy run.`,
    '',
    '## Memory (RSS, MB)',
    '',
    `Services run with \`--max-semi-space-size=1\` (as deployed). "Started" is 1.5 s after every service answered ready; "idle" is ${IDLE_SETTLE_MS / 1000} s later, with no load in between.`,
    '',
    '| service | started | idle | after load |',
    '|---|---|---|---|',
    ...Object.keys(r.memory_idle_mb).map(
      (k) => `| ${k} | ${r.memory_after_start_mb?.[k] ?? ''} | ${r.memory_idle_mb[k]} | ${r.memory_after_load_mb[k] ?? ''} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

/** `BENCH_RENDER_FROM=bench/results/latest.json`: rewrites the report from a run's JSON, without running anything. */
const RENDER_FROM = process.env['BENCH_RENDER_FROM'];

(RENDER_FROM ? rerender(RENDER_FROM) : main()).catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
