/**
 * Webhook fan-out through 1, 2 and 3 webhook-dispatcher processes (issue #9, dispatcher part).
 *
 *   pnpm build && pnpm exec tsx bench/dispatcher-scaling.ts
 *
 * For each replica count: fresh namespace and database, R dispatcher processes (dist/main.js),
 * 20 endpoints on one local receiver, then
 * - fan-out: BENCH_EVENTS task.event messages (one `completed` per task) published at once, as
 *   `pnpm bench` does; deliveries/s from the first publish to the last delivery;
 * - ordered: BENCH_ORDERED_TASKS tasks of four events each (created, progress, progress,
 *   completed), published in version order; every task's webhooks must arrive in version order;
 * - mixed (R = 1 and the highest R): 10 % of the endpoints answer after 1 s, 20 % fail each
 *   event once; healthy endpoints' latency against the all-healthy run;
 * - slow: BENCH_SLOW_EVENTS (600) events to endpoints that all answer after 1 s. Deliveries are
 *   then bound by the deliveries a replica keeps in flight (DELIVERY_CONCURRENCY), not by CPU:
 *   the case where adding replicas must add throughput, even on this 2-core machine.
 * Each run reports the deliveries each replica made (its `webhook_attempts_total`), the database
 * commands per delivery (`webhook_dispatcher_db_commands_total`, with `monitorCommands=true` in
 * MONGO_URL), and the CPU time of the dispatchers, the database (FerretDB and its PostgreSQL
 * backends, when FerretDB serves MONGO_URL), RabbitMQ and this process (publisher + receiver).
 *
 * Env: BENCH_REPLICAS (default 1,2,3), BENCH_EVENTS (5000), BENCH_ORDERED_TASKS (500),
 * BENCH_ENDPOINTS (20), BENCH_RUNS (runs per figure, median; default 1), BENCH_PHASES (default
 * healthy,ordered,mixed; the mixed run's ratio needs healthy), BENCH_DISPATCHER_ENV
 * (extra KEY=VALUE,... for every dispatcher), BENCH_DISPATCHER_NODE_ARGS (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/prof"). Results: bench/results/dispatcher-scaling.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TaskEvent } from '@tes/contracts';
import { createLogger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import {
  AMQP_URL,
  MONGO_URL,
  REPO_ROOT,
  freePort,
  removeStackData,
  startService,
  uniqueName,
  waitFor,
  waitReady,
  type ServiceProcess,
} from '@tes/testing';
import { median, summarize, type LatencySummary } from './lib/load.js';

const REPLICAS = (process.env['BENCH_REPLICAS'] ?? '1,2,3').split(',').map(Number);
const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 5000);
const ORDERED_TASKS = Number(process.env['BENCH_ORDERED_TASKS'] ?? 500);
const ENDPOINTS = Number(process.env['BENCH_ENDPOINTS'] ?? 20);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 1);
const PHASES = new Set((process.env['BENCH_PHASES'] ?? 'healthy,ordered,mixed,slow').split(','));
const SLOW_EVENTS = Number(process.env['BENCH_SLOW_EVENTS'] ?? 600);
const EXTRA_ENV = Object.fromEntries(
  (process.env['BENCH_DISPATCHER_ENV'] ?? '')
    .split(',')
    .filter((kv) => kv.includes('='))
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const NODE_ARGS = (process.env['BENCH_DISPATCHER_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const DRAIN_TIMEOUT_MS = 180_000;
const CLI = path.join(REPO_ROOT, 'services', 'webhook-dispatcher', 'dist', 'cli.js');

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Receiver: /ok/… answers 200 at once, /slow/… after 1 s, /fail-once/… 500 the first time an id comes.

interface Hit {
  path: string;
  at: number;
  eventId: string;
  taskId: string;
  status: number;
}

async function startReceiver() {
  const hits: Hit[] = [];
  const failedOnce = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const p = req.url ?? '/';
      const eventId = String(req.headers['webhook-id'] ?? '');
      let taskId = '';
      try {
        taskId = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { task_id?: string }).task_id ?? '');
      } catch {
        // counted all the same
      }
      const answer = (status: number) => {
        hits.push({ path: p, at: Date.now(), eventId, taskId, status });
        res.writeHead(status).end();
      };
      if (p.startsWith('/fail-once/') && !failedOnce.has(eventId)) {
        failedOnce.add(eventId);
        answer(500);
      } else if (p.startsWith('/slow/')) setTimeout(() => answer(200), 1000);
      else answer(200);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

// ---------------------------------------------------------------------------------------------
// CPU time of the processes involved, from /proc (Linux).

const TICK = 100;

function procCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / TICK;
  } catch {
    return 0;
  }
}

function cmdlines(): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.push({ pid: Number(entry), cmd: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // gone
    }
  }
  return out;
}

/** The database processes behind MONGO_URL: FerretDB listening on its port and its PostgreSQL backends, or a mongod. */
function databasePids(): { ferret: number[]; postgres: number[]; mongod: number[] } {
  const port = new URL(MONGO_URL).port || '27017';
  const all = cmdlines();
  const ferret = all.filter((p) => p.cmd.includes('ferretdb') && p.cmd.includes(`--listen-addr=127.0.0.1:${port}`));
  const pgDb = /--postgresql-url=\S*\/([A-Za-z0-9_]+)/.exec(ferret[0]?.cmd ?? '')?.[1];
  const postgres = pgDb ? all.filter((p) => p.cmd.startsWith('postgres: ') && p.cmd.includes(` ${pgDb} `)) : [];
  const mongod = all.filter((p) => /(^|\/)mongod /.test(p.cmd));
  return { ferret: ferret.map((p) => p.pid), postgres: postgres.map((p) => p.pid), mongod: mongod.map((p) => p.pid) };
}

interface CpuSnapshot {
  at: number;
  dispatchers: number;
  database: number;
  rabbitmq: number;
  bench: number;
}

function cpuSnapshot(dispatchers: ServiceProcess[]): CpuSnapshot {
  const db = databasePids();
  const sum = (pids: number[]) => pids.reduce((s, pid) => s + procCpuSeconds(pid), 0);
  const rabbit = cmdlines().filter((p) => p.cmd.includes('beam.smp') && p.cmd.includes('rabbit'));
  const me = process.cpuUsage();
  return {
    at: performance.now(),
    dispatchers: sum(dispatchers.map((d) => d.child.pid ?? 0)),
    database: sum([...db.ferret, ...db.postgres, ...db.mongod]),
    rabbitmq: sum(rabbit.map((p) => p.pid)),
    bench: (me.user + me.system) / 1e6,
  };
}

/** CPU use between two snapshots, as a share of the machine's cores (1.0 = every core busy). */
function cpuShare(a: CpuSnapshot, b: CpuSnapshot) {
  const wall = (b.at - a.at) / 1000;
  const cores = os.cpus().length;
  const share = (x: number) => Math.round((x / wall / cores) * 1000) / 1000;
  const dispatchers = share(b.dispatchers - a.dispatchers);
  const database = share(b.database - a.database);
  const rabbitmq = share(b.rabbitmq - a.rabbitmq);
  const bench = share(b.bench - a.bench);
  return {
    dispatchers,
    database,
    rabbitmq,
    bench_publisher_and_receiver: bench,
    total: Math.round((dispatchers + database + rabbitmq + bench) * 1000) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
// Dispatchers, endpoints, metrics.

interface Deployment {
  ns: string;
  db: string;
  replicas: { proc: ServiceProcess; opsPort: number }[];
  broker: Broker;
  close(): Promise<void>;
}

function dispatcherMongoUrl(): string {
  const u = new URL(MONGO_URL);
  u.searchParams.set('monitorCommands', 'true');
  return u.toString();
}

async function deploy(count: number): Promise<Deployment> {
  const ns = uniqueName('bds');
  const db = uniqueName('bds');
  const replicas: Deployment['replicas'] = [];
  for (let i = 0; i < count; i++) {
    const opsPort = await freePort();
    const proc = startService(
      'webhook-dispatcher',
      {
        AMQP_URL,
        MONGO_URL: dispatcherMongoUrl(),
        MONGO_DB: db,
        AMQP_NAMESPACE: ns,
        OPS_PORT: String(opsPort),
        LOG_LEVEL: 'warn',
        // As `pnpm bench`: a compressed retry schedule, fast polls.
        WEBHOOK_RETRY_SCHEDULE_MS: '500,500,500,500',
        POLL_INTERVAL_MS: '100',
        ...EXTRA_ENV,
      },
      NODE_ARGS,
    );
    replicas.push({ proc, opsPort });
  }
  await Promise.all(replicas.map((r) => waitReady(r.opsPort, r.proc)));
  const broker = new Broker({ url: AMQP_URL, source: 'bench', logger: createLogger({ service: 'bench', level: 'error' }), namespace: ns });
  await broker.connect();
  return {
    ns,
    db,
    replicas,
    broker,
    async close() {
      await broker.close(1000);
      await Promise.all(replicas.map((r) => r.proc.stop('SIGTERM')));
      await removeStackData({ amqpUrl: AMQP_URL, mongoUrl: MONGO_URL, namespace: ns, databases: [db] });
    },
  };
}

function setEndpoint(db: string, account: string, url: string): void {
  const res = spawnSync(process.execPath, [CLI, 'webhooks', 'set', '--account', account, '--env', 'test', '--url', url], {
    env: { ...process.env, MONGO_URL, MONGO_DB: db },
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`webhooks set failed: ${res.stderr}`);
}

async function scrape(port: number): Promise<{ attempts: number; delivered: number; commands: Record<string, number> }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let attempts = 0;
  let delivered = 0;
  const commands: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const attempt = /^webhook_attempts_total\{([^}]*)\} (\d+(?:\.\d+)?)/.exec(line);
    if (attempt) {
      attempts += Number(attempt[2]);
      if (attempt[1]?.includes('outcome="delivered"')) delivered += Number(attempt[2]);
    }
    const cmd = /^webhook_dispatcher_db_commands_total\{[^}]*command="([^"]+)"[^}]*\} (\d+(?:\.\d+)?)/.exec(line);
    if (cmd?.[1]) commands[cmd[1]] = (commands[cmd[1]] ?? 0) + Number(cmd[2]);
  }
  return { attempts, delivered, commands };
}

async function scrapeAll(d: Deployment) {
  return Promise.all(d.replicas.map((r) => scrape(r.opsPort)));
}

// ---------------------------------------------------------------------------------------------
// Events.

function taskEvent(kind: TaskEvent['kind'], taskId: string, account: string, version: number): TaskEvent {
  const now = new Date().toISOString();
  const task: TaskEvent['task'] = {
    id: taskId,
    account_id: account,
    environment: 'test',
    user_id: null,
    status: kind === 'completed' ? 'complete' : 'running',
    tool: 'text',
    metadata: {},
    created_at: now,
  };
  if (kind === 'completed') Object.assign(task, { completed_at: now, result: { text: 'fan' } });
  const event: TaskEvent = { kind, version, task };
  if (kind === 'progress') event.progress = { step: `s${version}`, tool: 'text', message: 'working', progress_pct: version * 20 };
  return event;
}

function publish(d: Deployment, e: TaskEvent): Promise<string> {
  return d.broker.publish('task.event', e, { partitionKey: e.task.account_id, messageId: `evt_${e.task.id}_${e.version}` });
}

/** Endpoints for one run: `paths[i]` is the i-th account's path prefix (/ok, /slow or /fail-once). */
function configure(d: Deployment, receiver: Receiver, label: string, pathOf: (i: number) => string): string[] {
  const accounts: string[] = [];
  for (let i = 0; i < ENDPOINTS; i++) {
    const account = `acc_${label}_${i}`;
    setEndpoint(d.db, account, `${receiver.base}${pathOf(i)}/${label}-${i}`);
    accounts.push(account);
  }
  return accounts;
}

async function untilDelivered(receiver: Receiver, ids: Set<string>, from: number): Promise<void> {
  const got = new Set<string>();
  let scanned = from;
  await waitFor(
    () => {
      for (; scanned < receiver.hits.length; scanned++) {
        const h = receiver.hits[scanned];
        if (h && h.status === 200 && ids.has(h.eventId)) got.add(h.eventId);
      }
      return got.size >= ids.size;
    },
    { timeoutMs: DRAIN_TIMEOUT_MS, intervalMs: 20, what: `${ids.size} deliveries (got ${got.size})` },
  );
}

interface FanoutResult {
  events: number;
  deliveries_per_s: number;
  wall_s: number;
  /** When the last publish was confirmed (the publisher's own pace). */
  published_after_s: number;
  healthy_latency_ms: LatencySummary;
  per_replica_deliveries: number[];
  db_commands_per_delivery: Record<string, number> | null;
  cpu_share_of_machine: ReturnType<typeof cpuShare>;
  duplicates: number;
}

/** EVENTS single-event tasks over the configured accounts, all published at once. */
async function fanout(d: Deployment, receiver: Receiver, accounts: string[], events: number, label: string): Promise<FanoutResult> {
  const before = await scrapeAll(d);
  const from = receiver.hits.length;
  const sentAt = new Map<string, number>();
  const ids = new Set<string>();
  const cpu0 = cpuSnapshot(d.replicas.map((r) => r.proc));
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: events }, async (_, i) => {
      const taskId = `task_${label}_${i}`;
      ids.add(`evt_${taskId}_1`);
      sentAt.set(`evt_${taskId}_1`, Date.now());
      await publish(d, taskEvent('completed', taskId, accounts[i % accounts.length] ?? '', 1));
    }),
  );
  const publishedMs = Date.now() - t0;
  await untilDelivered(receiver, ids, from);
  const cpu1 = cpuSnapshot(d.replicas.map((r) => r.proc));
  const hits = receiver.hits.slice(from).filter((h) => ids.has(h.eventId));
  const ok = hits.filter((h) => h.status === 200);
  const last = ok.reduce((m, h) => Math.max(m, h.at), t0);
  const firstOk = new Map<string, Hit>();
  for (const h of ok) if (!firstOk.has(h.eventId)) firstOk.set(h.eventId, h);
  const healthy = [...firstOk.values()].filter((h) => h.path.startsWith('/ok/'));
  const after = await scrapeAll(d);
  const perReplica = after.map((a, i) => a.delivered - (before[i]?.delivered ?? 0));
  const commands: Record<string, number> = {};
  after.forEach((a, i) => {
    for (const [k, v] of Object.entries(a.commands)) commands[k] = (commands[k] ?? 0) + v - (before[i]?.commands[k] ?? 0);
  });
  const delivered = perReplica.reduce((s, n) => s + n, 0) || ok.length;
  return {
    events,
    deliveries_per_s: Math.round(ok.length / ((last - t0) / 1000)),
    wall_s: Math.round((last - t0) / 100) / 10,
    published_after_s: Math.round(publishedMs / 100) / 10,
    healthy_latency_ms: summarize(healthy.map((h) => h.at - (sentAt.get(h.eventId) ?? h.at))),
    per_replica_deliveries: perReplica,
    db_commands_per_delivery: Object.keys(commands).length
      ? Object.fromEntries(Object.entries(commands).map(([k, v]) => [k, Math.round((v / delivered) * 100) / 100]))
      : null,
    cpu_share_of_machine: cpuShare(cpu0, cpu1),
    duplicates: ok.length - firstOk.size,
  };
}

interface OrderedResult {
  tasks: number;
  webhooks: number;
  deliveries_per_s: number;
  order_violations: number;
  per_replica_deliveries: number[];
}

/** Tasks of four events (created, progress, progress, completed) published in version order. */
async function ordered(d: Deployment, receiver: Receiver, accounts: string[], tasks: number, label: string): Promise<OrderedResult> {
  const before = await scrapeAll(d);
  const from = receiver.hits.length;
  const kinds: TaskEvent['kind'][] = ['created', 'progress', 'progress', 'completed'];
  const ids = new Set<string>();
  const t0 = Date.now();
  for (let v = 1; v <= kinds.length; v++) {
    await Promise.all(
      Array.from({ length: tasks }, async (_, i) => {
        const taskId = `task_${label}_${i}`;
        if (v > 1) ids.add(`evt_${taskId}_${v}`);
        await publish(d, taskEvent(kinds[v - 1] ?? 'created', taskId, accounts[i % accounts.length] ?? '', v));
      }),
    );
  }
  await untilDelivered(receiver, ids, from);
  const hits = receiver.hits.slice(from).filter((h) => ids.has(h.eventId));
  const last = hits.reduce((m, h) => Math.max(m, h.at), t0);
  // Per task, every request (first or repeated) must carry a version no lower than the one before.
  let violations = 0;
  const lastVersion = new Map<string, number>();
  for (const h of hits) {
    const v = Number(h.eventId.slice(h.eventId.lastIndexOf('_') + 1));
    if ((lastVersion.get(h.taskId) ?? 0) > v) violations++;
    lastVersion.set(h.taskId, v);
  }
  const after = await scrapeAll(d);
  return {
    tasks,
    webhooks: ids.size,
    deliveries_per_s: Math.round(hits.length / ((last - t0) / 1000)),
    order_violations: violations,
    per_replica_deliveries: after.map((a, i) => a.delivered - (before[i]?.delivered ?? 0)),
  };
}

function medianOf<T extends { deliveries_per_s: number }>(runs: T[]): T {
  const m = median(runs.map((r) => r.deliveries_per_s));
  return runs.reduce((best, r) => (Math.abs(r.deliveries_per_s - m) < Math.abs(best.deliveries_per_s - m) ? r : best));
}

async function main(): Promise<void> {
  log(
    `machine: ${os.cpus().length} cores, node ${process.version}; MONGO_URL ${MONGO_URL}; replicas ${REPLICAS.join(',')}; ${EVENTS} events`,
  );
  const receiver = await startReceiver();
  const results: Record<string, unknown> = {};
  const maxReplicas = Math.max(...REPLICAS);
  try {
    for (const r of REPLICAS) {
      const d = await deploy(r);
      try {
        const healthyAccounts = configure(d, receiver, `h${r}`, () => '/ok');
        // Warm-up: connections, caches, JIT.
        await fanout(d, receiver, healthyAccounts, Math.min(500, EVENTS), `warm${r}`);
        const entry: Record<string, unknown> = {};
        let healthy: FanoutResult | undefined;
        if (PHASES.has('healthy')) {
          const runs: FanoutResult[] = [];
          for (let i = 0; i < RUNS; i++) runs.push(await fanout(d, receiver, healthyAccounts, EVENTS, `h${r}r${i}`));
          healthy = medianOf(runs);
          entry['all_healthy'] = healthy;
          log(`${r} replica(s), all healthy: ${JSON.stringify(healthy)}`);
        }
        if (PHASES.has('ordered')) {
          const orderedRuns: OrderedResult[] = [];
          for (let i = 0; i < RUNS; i++) orderedRuns.push(await ordered(d, receiver, healthyAccounts, ORDERED_TASKS, `o${r}r${i}`));
          entry['ordered'] = medianOf(orderedRuns);
          log(`${r} replica(s), ordered: ${JSON.stringify(entry['ordered'])}`);
        }
        if (PHASES.has('mixed') && (r === 1 || r === maxReplicas)) {
          const slowCount = Math.round(ENDPOINTS * 0.1);
          const failCount = Math.round(ENDPOINTS * 0.2);
          const mixedAccounts = configure(d, receiver, `m${r}`, (i) =>
            i < slowCount ? '/slow' : i < slowCount + failCount ? '/fail-once' : '/ok',
          );
          const mixedRuns: FanoutResult[] = [];
          for (let i = 0; i < RUNS; i++) mixedRuns.push(await fanout(d, receiver, mixedAccounts, EVENTS, `m${r}r${i}`));
          const mixed = medianOf(mixedRuns);
          log(`${r} replica(s), mixed: ${JSON.stringify(mixed)}`);
          entry['mixed_10pct_slow_20pct_fail_once'] = mixed;
          if (healthy) entry['healthy_p99_ratio'] = Math.round((mixed.healthy_latency_ms.p99 / healthy.healthy_latency_ms.p99) * 100) / 100;
        }
        if (PHASES.has('slow')) {
          const slowAccounts = configure(d, receiver, `s${r}`, () => '/slow');
          const slowRuns: FanoutResult[] = [];
          for (let i = 0; i < RUNS; i++) slowRuns.push(await fanout(d, receiver, slowAccounts, SLOW_EVENTS, `s${r}r${i}`));
          entry['all_slow_1s'] = medianOf(slowRuns);
          log(`${r} replica(s), all endpoints slow (1 s): ${JSON.stringify(entry['all_slow_1s'])}`);
        }
        results[`${r}_replica${r > 1 ? 's' : ''}`] = entry;
      } finally {
        await d.close();
      }
    }
  } finally {
    await receiver.close();
  }
  const report = {
    started_at: new Date().toISOString(),
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version },
    settings: {
      events: EVENTS,
      slow_events: SLOW_EVENTS,
      ordered_tasks: ORDERED_TASKS,
      endpoints: ENDPOINTS,
      runs: RUNS,
      dispatcher_env: EXTRA_ENV,
    },
    results,
  };
  mkdirSync(path.join(REPO_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(path.join(REPO_ROOT, 'bench', 'results', 'dispatcher-scaling.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
