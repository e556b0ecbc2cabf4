/**
 * Sets the slowest tasks of a run beside what lib/stall-signals.ts recorded while they waited,
 * and says which signal the slow tasks share that typical ones do not.
 */
import { summarize } from './load.js';
import type { recordStallSignals } from './stall-signals.js';

export interface TaskHops {
  id: string;
  scheduled: number;
  received: number;
  /** [hop, from, to] in epoch ms. */
  hops: [string, number, number][];
}

type Signals = Omit<ReturnType<typeof recordStallSignals>, 'stop'>;

const SHORT: Record<string, string> = {
  'scheduled → gateway asks orchestrator': 'gw',
  'gateway asks → orchestrator stores task': 'orch store',
  'orchestrator stores → executor starts step': 'to exec',
  'step runs (trace duration)': 'step',
  'step finished → orchestrator completes task': 'orch complete',
  'task complete → dispatcher stores event': 'disp store',
  'event stored → attempt starts': 'to attempt',
  'attempt starts → receiver has it': 'delivery',
};

const overlaps = (a0: number, a1: number, b0: number, b1: number) => a0 <= b1 && b0 <= a1;

function longestHop(t: TaskHops): [string, number, number] {
  return (
    t.hops.filter(([, f, to]) => Number.isFinite(f) && Number.isFinite(to)).sort((a, b) => b[2] - b[1] - (a[2] - a[1]))[0] ?? ['', 0, 0]
  );
}

/** What was going on between from and to. */
function evidence(s: Signals, from: number, to: number) {
  const slow = s.slow.filter((c) => overlaps(c.start, c.start + c.ms, from, to)).sort((a, b) => b.ms - a.ms);
  const gc = s.gc.filter((g) => overlaps(g.at - g.ms, g.at, from, to)).sort((a, b) => b.ms - a.ms);
  const probe = s.probe.filter((p) => overlaps(p.start, p.start + p.ms, from, to));
  // Once-a-second samples: those taken during the window or within a second of it.
  const samples = s.samples.filter((x) => x.at >= from - 1000 && x.at <= to + 1000);
  const broker = s.broker.filter((b) => b.at >= from - 2000 && b.at <= to + 2000);
  const schema: Record<string, number> = {};
  for (const x of samples) for (const [k, n] of Object.entries(x.ferretSchemaChanges ?? {})) schema[k] = (schema[k] ?? 0) + n;
  const notRunning: Record<string, number> = {};
  for (const b of broker)
    for (const [k, n] of Object.entries(b.states)) if (k !== 'running') notRunning[k] = Math.max(notRunning[k] ?? 0, n);
  const max = (xs: number[]) => (xs.length ? Math.max(...xs) : 0);
  return {
    slow,
    slowMaxMs: slow[0]?.ms ?? 0,
    poolWaitMaxMs: max(slow.map((c) => c.poolWaitMs ?? 0)),
    gcMaxMs: gc[0]?.ms ?? 0,
    gcService: gc[0]?.service ?? '',
    probeMaxMs: max(probe.map((p) => p.ms)),
    schema,
    schemaChanges: Object.values(schema).reduce((a, b) => a + b, 0),
    pgLongestMs: max(samples.map((x) => x.pgLongestMs ?? 0)),
    pgLongestVerb: samples.sort((a, b) => (b.pgLongestMs ?? 0) - (a.pgLongestMs ?? 0))[0]?.pgLongestVerb ?? '',
    pgActiveMax: max(samples.map((x) => x.pgActive ?? 0)),
    autovacuum: samples.reduce((a, x) => a + (x.autovacuumRuns ?? 0), 0) + max(samples.map((x) => x.autovacuumWorkers ?? 0)),
    ferretCmdsPerS: max(samples.map((x) => x.ferretCommands ?? 0)),
    load: max(samples.map((x) => x.load1)),
    benchLoopMs: max(samples.map((x) => x.benchLoopMs)),
    brokerNotRunning: Object.entries(notRunning)
      .map(([k, n]) => `${n} ${k}`)
      .join(', '),
  };
}

const fmtSchema = (o: Record<string, number>) =>
  Object.entries(o)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');

export function printStallReport(options: {
  tasks: TaskHops[];
  start: number;
  signals: Signals;
  autovacuum: { table: string; last_autovacuum: string; last_autoanalyze: string }[];
  slowest: number;
}): void {
  const { tasks, start, signals: s } = options;
  const rel = (t: number) => Math.round((t - start) / 100) / 10;
  const byE2e = [...tasks].sort((a, b) => b.received - b.scheduled - (a.received - a.scheduled));
  const worst = byE2e.slice(0, options.slowest);

  console.log(`\nThe ${worst.length} slowest tasks, every hop in ms (sent at: seconds after the first measured task):`);
  console.table(
    worst.map((t) => ({
      'sent at (s)': rel(t.scheduled),
      'end to end': Math.round(t.received - t.scheduled),
      ...Object.fromEntries(t.hops.map(([h, f, to]) => [SHORT[h] ?? h, Math.round(to - f)])),
    })),
  );

  console.log('\nBeside each, what happened during its longest hop (samples: within a second of it; broker: within 2 s):');
  console.table(
    worst.map((t) => {
      const [hop, from, to] = longestHop(t);
      const e = evidence(s, from, to);
      return {
        'sent at (s)': rel(t.scheduled),
        'longest hop': `${SHORT[hop] ?? hop} ${Math.round(to - from)}`,
        'slow commands (≥ threshold)': e.slow
          .slice(0, 2)
          .map((c) => `${c.service.replace('task-', '').replace('webhook-', '')} ${c.command} ${c.collection} ${Math.round(c.ms)}`)
          .join('; '),
        'n slow': e.slow.length,
        'pool wait max': e.poolWaitMaxMs,
        'probe update max': e.probeMaxMs,
        'FerretDB schema changes': fmtSchema(e.schema),
        'PG longest stmt': e.pgLongestMs ? `${e.pgLongestMs} ${e.pgLongestVerb}` : '',
        'GC max': e.gcMaxMs ? `${e.gcMaxMs} ${e.gcService}` : '',
        autovacuum: e.autovacuum,
        broker: e.brokerNotRunning,
        load: e.load,
      };
    }),
  );

  // Which signal the slow tasks share: the slowest 1 % against the tasks around the median.
  const n = byE2e.length;
  const slowSet = byE2e.slice(0, Math.max(1, Math.ceil(n / 100)));
  const typical = byE2e.slice(Math.floor(n * 0.45), Math.ceil(n * 0.55));
  const share = (set: TaskHops[], f: (e: ReturnType<typeof evidence>) => boolean) =>
    `${Math.round((100 * set.filter((t) => f(evidence(s, longestHop(t)[1], longestHop(t)[2]))).length) / Math.max(1, set.length))} %`;
  const tests: [string, (e: ReturnType<typeof evidence>) => boolean][] = [
    ['a service database command ≥ 100 ms', (e) => e.slowMaxMs >= 100],
    ['a wait of ≥ 50 ms for a pool connection', (e) => e.poolWaitMaxMs >= 50],
    ['the probe update took ≥ 100 ms', (e) => e.probeMaxMs >= 100],
    ['a FerretDB schema change (anyone)', (e) => e.schemaChanges > 0],
    ['a PostgreSQL statement running ≥ 100 ms', (e) => e.pgLongestMs >= 100],
    ['a GC pause ≥ 50 ms', (e) => e.gcMaxMs >= 50],
    ['autovacuum ran', (e) => e.autovacuum > 0],
    ['a broker connection not running (flow, blocked)', (e) => e.brokerNotRunning !== ''],
    ['bench event loop delayed ≥ 100 ms', (e) => e.benchLoopMs >= 100],
  ];
  console.log(
    `\nDuring the longest hop of the slowest 1 % (${slowSet.length} tasks) and of the tasks around the median (${typical.length}):`,
  );
  console.table(
    Object.fromEntries(tests.map(([k, f]) => [k, { 'slowest 1 %': share(slowSet, f), 'around the median': share(typical, f) }])),
  );

  // Per second: where the slow tasks cluster and what else happened then.
  console.log('\nSeconds of the run where a task sent then took over 2x the median, or the probe or a schema change stood out:');
  const median = byE2e[Math.floor(n / 2)];
  const medianMs = median ? median.received - median.scheduled : 0;
  const rows: Record<string, unknown>[] = [];
  const end = Math.max(...tasks.map((t) => t.scheduled));
  for (let t0 = start; t0 <= end; t0 += 1000) {
    const sent = tasks.filter((t) => t.scheduled >= t0 && t.scheduled < t0 + 1000);
    const worstMs = Math.max(0, ...sent.map((t) => t.received - t.scheduled));
    const e = evidence(s, t0, t0 + 1000);
    if (worstMs < 2 * medianMs && e.probeMaxMs < 200 && e.schemaChanges === 0) continue;
    rows.push({
      s: rel(t0),
      'worst task sent': Math.round(worstMs),
      'slow cmds': e.slow.length,
      'slowest cmd': e.slow[0] ? `${e.slow[0].service} ${e.slow[0].command} ${e.slow[0].collection} ${Math.round(e.slow[0].ms)}` : '',
      'probe max': e.probeMaxMs,
      'schema changes': fmtSchema(e.schema),
      'FerretDB cmds/s': e.ferretCmdsPerS,
      'PG active': e.pgActiveMax,
      'PG longest': e.pgLongestMs,
      'GC max': e.gcMaxMs,
      autovacuum: e.autovacuum,
      load: e.load,
    });
  }
  console.table(rows.slice(0, 40));

  const groups = new Map<string, number[]>();
  const waits = new Map<string, number>();
  for (const c of s.slow) {
    const k = `${c.service}: ${c.command} ${c.collection}`;
    groups.set(k, [...(groups.get(k) ?? []), c.ms]);
    waits.set(k, Math.max(waits.get(k) ?? 0, c.poolWaitMs ?? 0));
  }
  console.log('\nSlow database commands over the whole run (services, threshold DB_SLOW_COMMAND_MS):');
  console.table(
    Object.fromEntries(
      [...groups].sort((a, b) => b[1].length - a[1].length).map(([k, v]) => [k, { ...summarize(v), 'pool wait max': waits.get(k) ?? 0 }]),
    ),
  );
  const gcBy = new Map<string, number[]>();
  for (const g of s.gc) gcBy.set(`${g.service} ${g.kind}`, [...(gcBy.get(`${g.service} ${g.kind}`) ?? []), g.ms]);
  console.log('GC pauses over the whole run (--trace-gc), ms:');
  console.table(Object.fromEntries([...gcBy].map(([k, v]) => [k, { ...summarize(v), total: Math.round(v.reduce((a, b) => a + b, 0)) }])));
  console.log('Probe updates (one at a time, its own collection on the same server), ms; its 5 slowest with what else happened:');
  console.table({ probe: summarize(s.probe.map((p) => p.ms)) });
  console.table(
    [...s.probe]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 5)
      .map((p) => {
        const e = evidence(s, p.start, p.start + p.ms);
        return {
          'at (s)': rel(p.start),
          ms: p.ms,
          'FerretDB schema changes': fmtSchema(e.schema),
          'PG longest stmt': e.pgLongestMs ? `${e.pgLongestMs} ${e.pgLongestVerb}` : '',
          'PG active max': e.pgActiveMax,
          load: e.load,
        };
      }),
  );
  const schemaTotal: Record<string, number> = {};
  for (const x of s.samples) for (const [k, v] of Object.entries(x.ferretSchemaChanges ?? {})) schemaTotal[k] = (schemaTotal[k] ?? 0) + v;
  const loads = s.samples.map((x) => x.load1);
  console.log(
    `FerretDB schema changes by any client while recording: ${fmtSchema(schemaTotal) || 'none'}; load average (1 min) ${Math.min(...loads)}-${Math.max(...loads)} on ${s.samples.length} samples; broker samples ${s.broker.length} (states seen: ${[...new Set(s.broker.flatMap((b) => Object.keys(b.states)))].join(', ') || 'none'})`,
  );
  console.log('Autovacuum / autoanalyze of this stack’s tables (seconds after the first measured task):');
  console.table(
    options.autovacuum.map((a) => ({
      table: a.table,
      autovacuum: a.last_autovacuum ? rel(Date.parse(a.last_autovacuum)) : '',
      autoanalyze: a.last_autoanalyze ? rel(Date.parse(a.last_autoanalyze)) : '',
    })),
  );
}
