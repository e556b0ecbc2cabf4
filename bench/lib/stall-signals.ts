/**
 * What may stall a task, recorded beside a benchmark's load so the slowest tasks can be set next
 * to it (bench/latency-breakdown.ts): the services' slow database commands and GC pauses (from
 * their stdout: DB_SLOW_COMMAND_MS's log lines and `node --trace-gc`), a probe's own updates on
 * the MongoDB-wire server, and once a second PostgreSQL's activity and autovacuum, FerretDB's
 * command counters (schema changes by anyone sharing the server), RabbitMQ's connection states
 * (rabbitmqctl: as often as it answers), the machine's load and this process's event-loop delay.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MongoClient } from 'mongodb';
import type { ServiceName, Stack } from '@tes/testing';
import type { BenchDatabase } from './own-database.js';

export interface SlowCommand {
  service: ServiceName;
  command: string;
  collection: string;
  start: number;
  ms: number;
  poolWaitMs: number | null;
}

export interface GcPause {
  service: ServiceName;
  /** When the line arrived (the pause had just ended). */
  at: number;
  kind: string;
  ms: number;
}

export interface Sample {
  at: number;
  load1: number;
  /** PostgreSQL (FerretDB's database): active client backends, those waiting on a lock or I/O, the longest running statement. */
  pgActive?: number;
  pgWaiting?: number;
  pgLongestMs?: number;
  pgLongestVerb?: string;
  /** autovacuum workers running, and autovacuum + autoanalyze runs finished since the previous sample (every table). */
  autovacuumWorkers?: number;
  autovacuumRuns?: number;
  /** Commands the whole FerretDB served since the previous sample (every client of it: on the shared server, other suites too), and its schema changes. */
  ferretCommands?: number;
  ferretSchemaChanges?: Record<string, number>;
  /** This process's worst event-loop delay in the second (its receiver stamps arrivals). */
  benchLoopMs: number;
}

export interface BrokerSample {
  at: number;
  states: Record<string, number>;
}

export interface ProbeUpdate {
  start: number;
  ms: number;
}

/** FerretDB commands that change its metadata: on v1 each holds its one global registry lock. */
const SCHEMA_CHANGES = new Set(['create', 'createIndexes', 'drop', 'dropDatabase', 'dropIndexes', 'renameCollection']);

const GC_LINE = /ms: ([A-Za-z -]+?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, ([\d.]+) \/ [\d.]+ ms/;

function run(cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, env: { ...process.env, PGCONNECT_TIMEOUT: '3' } }, (err, stdout) =>
      resolve(err ? '' : stdout),
    );
  });
}

async function ferretCounts(debugUrl: string): Promise<Map<string, number> | undefined> {
  try {
    const res = await fetch(`${debugUrl}/debug/metrics`, { signal: AbortSignal.timeout(3000) });
    if (!res.ok) return undefined;
    const counts = new Map<string, number>();
    for (const m of (await res.text()).matchAll(/^ferretdb_client_requests_total\{command="([^"]+)",opcode="[^"]+"\} (\d+)/gm)) {
      counts.set(m[1] ?? '', (counts.get(m[1] ?? '') ?? 0) + Number(m[2]));
    }
    return counts;
  } catch {
    return undefined; // no answer within 3 s: this second goes without
  }
}

/** The server's database in PostgreSQL: a name made by OwnMongo or scripts/infra.sh, checked before it goes into SQL. */
function pgDatabase(db: Pick<BenchDatabase, 'pgDatabase'>): string {
  if (!/^[A-Za-z0-9_]+$/.test(db.pgDatabase)) throw new Error(`unexpected PostgreSQL database name ${db.pgDatabase}`);
  return db.pgDatabase;
}

// Only statement verbs leave PostgreSQL's activity view: FerretDB's statements take the documents as parameters anyway.
const pgSql = (database: string) => `select json_build_object(
  'active', count(*) filter (where backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()),
  'waiting', count(*) filter (where backend_type = 'client backend' and state = 'active' and wait_event_type in ('Lock', 'LWLock', 'IO')),
  'longest_ms', coalesce(max(extract(epoch from clock_timestamp() - query_start) * 1000) filter (where backend_type = 'client backend' and state = 'active' and pid <> pg_backend_pid()), 0)::int,
  'longest_verb', (select substring(query from '^\\s*(\\w+(?:\\s+\\w+)?)') from pg_stat_activity a where a.backend_type = 'client backend' and a.state = 'active' and a.pid <> pg_backend_pid() order by query_start limit 1),
  'autovacuum_workers', count(*) filter (where backend_type = 'autovacuum worker'),
  'autovacuum_runs', (select coalesce(sum(autovacuum_count + autoanalyze_count), 0) from pg_stat_user_tables)
) from pg_stat_activity where datname = '${database}' or backend_type = 'autovacuum worker'`;

/** psql on FerretDB's database, PostgreSQL's settings as scripts/infra.sh runs it. */
const psql = (database: string) => ['-h', '127.0.0.1', '-U', 'postgres', '-d', database, '-At', '-c'];

export function recordStallSignals(
  stack: Stack,
  db: Pick<BenchDatabase, 'mongoUrl' | 'debugUrl' | 'pgDatabase'>,
  options: { probeEveryMs?: number } = {},
) {
  const database = pgDatabase(db);
  const slow: SlowCommand[] = [];
  const gc: GcPause[] = [];
  const samples: Sample[] = [];
  const broker: BrokerSample[] = [];
  const probe: ProbeUpdate[] = [];
  let stopped = false;

  // Service stdout: JSON log lines and --trace-gc lines, split across chunks.
  for (const [service, proc] of stack.procs) {
    let rest = '';
    proc.child.stdout?.on('data', (c: Buffer) => {
      const at = Date.now();
      const lines = (rest + c.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (line.includes('"slow database command"')) {
          const l = JSON.parse(line) as Record<string, unknown>;
          slow.push({
            service,
            command: String(l['command']),
            collection: String(l['collection']),
            start: Date.parse(String(l['started_at'])),
            ms: Number(l['duration_ms']),
            poolWaitMs: typeof l['pool_wait_ms'] === 'number' ? l['pool_wait_ms'] : null,
          });
          continue;
        }
        const g = GC_LINE.exec(line);
        if (g) gc.push({ service, at, kind: g[1] ?? '', ms: Number(g[2]) });
      }
    });
  }

  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let lastFerret: Map<string, number> | undefined;
  let lastAutovacuum: number | undefined;
  let sampling = false;
  const sample = async () => {
    if (sampling) return; // a slow psql: the next second's sample comes when this one is done
    sampling = true;
    const s: Sample = { at: Date.now(), load1: Math.round(os.loadavg()[0]! * 100) / 100, benchLoopMs: Math.round(loop.max / 1e6) };
    loop.reset();
    const [pg, ferret] = await Promise.all([run('psql', [...psql(database), pgSql(database)], 5000), ferretCounts(db.debugUrl)]);
    if (pg.trim()) {
      const p = JSON.parse(pg) as Record<string, number | string | null>;
      s.pgActive = Number(p['active']);
      s.pgWaiting = Number(p['waiting']);
      s.pgLongestMs = Number(p['longest_ms']);
      if (typeof p['longest_verb'] === 'string') s.pgLongestVerb = p['longest_verb'].toUpperCase();
      s.autovacuumWorkers = Number(p['autovacuum_workers']);
      const runs = Number(p['autovacuum_runs']);
      // A dropped table takes its counts with it: a negative difference counts as none.
      if (lastAutovacuum !== undefined) s.autovacuumRuns = Math.max(0, runs - lastAutovacuum);
      lastAutovacuum = runs;
    }
    if (ferret) {
      if (lastFerret) {
        let total = 0;
        const changes: Record<string, number> = {};
        for (const [cmd, n] of ferret) {
          const d = n - (lastFerret.get(cmd) ?? 0);
          total += d;
          if (SCHEMA_CHANGES.has(cmd) && d > 0) changes[cmd] = d;
        }
        s.ferretCommands = total;
        s.ferretSchemaChanges = changes;
      }
      lastFerret = ferret;
    }
    samples.push(s);
    sampling = false;
  };
  const timer = setInterval(() => void sample(), 1000);

  // rabbitmqctl starts an Erlang VM (1-2 s on a busy machine): one call after the other.
  const brokerLoop = (async () => {
    while (!stopped) {
      const out = await run('rabbitmqctl', ['list_connections', 'state', '--quiet', '--no-table-headers'], 10_000);
      const states: Record<string, number> = {};
      for (const st of out
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean))
        states[st] = (states[st] ?? 0) + 1;
      broker.push({ at: Date.now(), states });
    }
  })();

  // A probe of the server itself: one update at a time on its own collection, every probeEveryMs.
  // A failing probe only ends the probe: the run, and the stack's shutdown after it, go on.
  const probeLoop = (async () => {
    const client = await MongoClient.connect(db.mongoUrl, { maxPoolSize: 2 });
    const coll = client.db(`${stack.namespace}_probe`).collection<{ _id: string; n: number }>('probe');
    await coll.insertOne({ _id: 'p', n: 0 });
    try {
      while (!stopped) {
        const start = Date.now();
        await coll.updateOne({ _id: 'p' }, { $inc: { n: 1 } });
        probe.push({ start, ms: Date.now() - start });
        await new Promise((r) => setTimeout(r, options.probeEveryMs ?? 100));
      }
    } finally {
      await client.db(`${stack.namespace}_probe`).dropDatabase();
      await client.close();
    }
  })().catch((err: unknown) => process.stderr.write(`stall probe stopped: ${err instanceof Error ? err.message : String(err)}\n`));

  return {
    slow,
    gc,
    samples,
    broker,
    probe,
    async stop() {
      stopped = true;
      clearInterval(timer);
      loop.disable();
      await Promise.all([brokerLoop, probeLoop]);
    },
  };
}

/** Autovacuum and autoanalyze runs PostgreSQL recorded on this stack's tables (FerretDB: a schema per database). */
export async function stackAutovacuum(
  namespace: string,
  db: Pick<BenchDatabase, 'pgDatabase'>,
): Promise<{ table: string; last_autovacuum: string; last_autoanalyze: string }[]> {
  const sql = `select coalesce(json_agg(json_build_object('table', schemaname || '.' || relname, 'last_autovacuum', last_autovacuum, 'last_autoanalyze', last_autoanalyze)), '[]')
    from pg_stat_user_tables where schemaname like '${namespace.replace(/[^A-Za-z0-9_]/g, '')}%' and (last_autovacuum is not null or last_autoanalyze is not null)`;
  const out = await run('psql', [...psql(pgDatabase(db)), sql], 10_000);
  return out.trim() ? (JSON.parse(out) as { table: string; last_autovacuum: string; last_autoanalyze: string }[]) : [];
}
