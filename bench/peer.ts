/**
 * `pnpm bench:peer`: this service beside a real peer doing the same work on the same machine, in
 * the same run. The peer is Temporal (its development server and the TypeScript SDK, installed
 * by bench/peer/install.sh; see docs/performance.md for why Temporal and not n8n). For a one-step
 * and a three-step task: end-to-end p50/p99 (request → the completion call at a local receiver)
 * at fixed arrival rates, the highest rate tried with p99 ≤ 250 ms and nothing missing or
 * refused, and the CPU per task of each side's processes. Both sides are up at once (each idle while the other is
 * measured) and take turns at every rate, so both meet the same load of a shared machine.
 *
 * BENCH_SECONDS (measured, default 10), BENCH_WARMUP_SECONDS (2), BENCH_RUNS (1),
 * BENCH_PEER_RATES (10,25,50), BENCH_PEER_SEARCH_RATES (5,15,35,75,100,150), BENCH_PEER_SIDES
 * (service,peer). Writes bench/results/peer.json and bench/results/peer.md.
 *
 * This service runs on a FerretDB of its own (bench/lib/own-database.ts: other clients' schema
 * changes on the machine's shared server stall every task); BENCH_SHARED_DB=1 runs it on the
 * shared one. The peer keeps its own in-memory SQLite either way.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { startWebhookReceiver } from './lib/receiver.js';
import { pidCpuMeter } from './lib/pid-cpu.js';
import { measureStep, sustains, type Side, type StepResult, type StepSettings } from './peer/measure.js';
import { startTemporalPeer, type PeerWorkflow } from './peer/temporal.js';
import { startThisService } from './peer/this-service.js';
import { benchDatabase } from './lib/own-database.js';

const list = (name: string, fallback: number[]) => (process.env[name] ? String(process.env[name]).split(',').map(Number) : fallback);
const SETTINGS: StepSettings = {
  durationMs: Number(process.env['BENCH_SECONDS'] ?? 10) * 1000,
  warmupMs: Number(process.env['BENCH_WARMUP_SECONDS'] ?? 2) * 1000,
  runs: Number(process.env['BENCH_RUNS'] ?? 1),
};
const FIXED_RATES = list('BENCH_PEER_RATES', [10, 25, 50]);
const SEARCH_RATES = list('BENCH_PEER_SEARCH_RATES', [5, 15, 35, 75, 100, 150]);
const SIDES = (process.env['BENCH_PEER_SIDES'] ?? 'service,peer').split(',');

/** The two task shapes: the same steps on both sides (the text tool's echo, uppercase, count_words). */
const SHAPES: { name: string; prompt: string; workflow: PeerWorkflow; actions: string[] }[] = [
  { name: 'one-step', prompt: 'Echo "bench"', workflow: 'oneStep', actions: ['echo'] },
  {
    name: 'three-step',
    prompt: 'Echo "bench peer", uppercase it, then count the words',
    workflow: 'threeSteps',
    actions: ['echo', 'uppercase', 'count_words'],
  },
];

interface ShapeResult {
  fixed: Record<string, StepResult>;
  sustained: { highest_ok_rate_per_s: number; steps: Record<string, StepResult & { ok: boolean }> };
}

const log = (msg: string) => process.stderr.write(`bench:peer: ${msg}\n`);

/**
 * One shape on every side, interleaved: each rate runs on one side, then on the next, so both
 * meet the same machine (shared with other work) within seconds of each other. Then the search:
 * rising rates, each side until one fails the bar.
 */
async function measureShape(shape: string, sides: [string, Side][]): Promise<Record<string, ShapeResult>> {
  const out = new Map<string, ShapeResult>();
  const result = (name: string): ShapeResult => {
    const r = out.get(name) ?? { fixed: {}, sustained: { highest_ok_rate_per_s: 0, steps: {} } };
    out.set(name, r);
    return r;
  };
  for (const rate of FIXED_RATES)
    for (const [name, side] of sides) {
      const r = await measureStep(side, rate, SETTINGS);
      result(name).fixed[`${rate}/s`] = r;
      // A fixed rate that sustained counts too (the search may start above it).
      if (sustains(r)) result(name).sustained.highest_ok_rate_per_s = Math.max(result(name).sustained.highest_ok_rate_per_s, rate);
      log(`${name} ${shape} @${rate}/s: ${JSON.stringify(r)}`);
    }
  // The search tries only rates between the highest fixed rate that sustained and the lowest that
  // did not, rising, each side until one fails.
  const searching = new Set(sides.map(([name]) => name));
  const lowestFailed = (name: string) =>
    Math.min(...Object.entries(result(name).fixed).flatMap(([k, r]) => (sustains(r) ? [] : [parseInt(k, 10)])));
  for (const rate of [...SEARCH_RATES].sort((x, y) => x - y))
    for (const [name, side] of sides) {
      const s = result(name).sustained;
      if (!searching.has(name) || rate <= s.highest_ok_rate_per_s || rate >= lowestFailed(name)) continue;
      const r = await measureStep(side, rate, SETTINGS);
      s.steps[`${rate}/s`] = { ...r, ok: sustains(r) };
      log(`${name} ${shape} search @${rate}/s: ${JSON.stringify(s.steps[`${rate}/s`])}`);
      if (sustains(r)) s.highest_ok_rate_per_s = rate;
      else searching.delete(name);
    }
  return Object.fromEntries(out);
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadAtStart = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const receiver = await startWebhookReceiver();
  const results: Record<string, Record<string, ShapeResult>> = {};
  const stops: (() => Promise<void>)[] = [];
  try {
    const sidesOf: ((shape: (typeof SHAPES)[number]) => Promise<[string, Side]>)[] = [];
    if (SIDES.includes('service')) {
      const db = await benchDatabase();
      stops.push(() => db.close());
      log(`this service: starting the stack on ${db.describe}`);
      const service = await startThisService(db.mongoUrl, `${receiver.base}/ok/service`, receiver.completeAt);
      stops.push(() => service.stop());
      sidesOf.push(async (shape) => {
        // The shape is what the planner made of the prompt and the executor ran, not an assumption.
        const ran = await service.actionsRun(shape.prompt);
        if (ran.join(',') !== shape.actions.join(','))
          throw new Error(`"${shape.prompt}" ran [${ran.join(', ')}], not [${shape.actions.join(', ')}]`);
        return ['service', service.side(shape.prompt)];
      });
    }
    if (SIDES.includes('peer')) {
      log('peer: starting the Temporal dev server and worker');
      const peer = await startTemporalPeer(log);
      stops.push(() => peer.stop());
      const webhook = `${receiver.base}/ok/peer`;
      sidesOf.push(async (shape) => {
        const side: Side = {
          async fire() {
            const id = `peer-${randomUUID()}`;
            await peer.start(shape.workflow, id, { text: 'bench peer', webhook });
            return id;
          },
          meter: () => pidCpuMeter(peer.processes),
          completeAt: receiver.completeAt,
        };
        // One task first: the worker bundles and caches on its first workflow, not in a measured window.
        const first = await side.fire();
        const deadline = Date.now() + 30_000;
        while (!receiver.completeAt.has(first) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        if (!receiver.completeAt.has(first)) throw new Error(`the peer's first ${shape.workflow} did not complete in 30 s`);
        return ['peer', side];
      });
    }
    for (const shape of SHAPES) {
      const sides: [string, Side][] = [];
      for (const of of sidesOf) sides.push(await of(shape));
      for (const [side, r] of Object.entries(await measureShape(shape.name, sides))) (results[side] ??= {})[shape.name] = r;
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
    await receiver.close();
  }

  const report = {
    started_at: startedAt,
    load_average: { at_start: loadAtStart, at_end: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    settings: { ...SETTINGS, fixed_rates: FIXED_RATES, search_rates: SEARCH_RATES },
    machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model, memory_gib: Math.round(os.totalmem() / 2 ** 30), node: process.version },
    peer: { name: 'Temporal', server: 'temporal CLI v1.5.1, server start-dev (in-memory SQLite)', sdk: '@temporalio/worker 1.24.0' },
    results,
  };
  mkdirSync('bench/results', { recursive: true });
  const markdown = renderTable(results);
  writeFileSync('bench/results/peer.json', `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync('bench/results/peer.md', `${markdown}\n`);
  process.stdout.write(`${markdown}\n`);
  log('written: bench/results/peer.json and bench/results/peer.md');
}

/** One row per shape, rate and side, the two sides next to each other. */
function renderTable(results: Record<string, Record<string, ShapeResult>>): string {
  const sides = Object.keys(results);
  const name = (side: string) => (side === 'peer' ? 'Temporal' : 'this service');
  const lines = [
    '| task | rate | side | p50 ms | p99 ms | missing | refused | CPU ms per task (own processes only) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const shape of SHAPES)
    for (const rate of FIXED_RATES)
      for (const side of sides) {
        const r = results[side]?.[shape.name]?.fixed[`${rate}/s`];
        if (r)
          lines.push(
            `| ${shape.name} | ${rate}/s | ${name(side)} | ${r.p50} | ${r.p99} | ${r.missing} | ${r.start_errors} | ${r.cpu_ms_per_task} (${r.cpu_ms_per_task_own}) |`,
          );
      }
  lines.push('', '| task | side | highest rate tried with p99 ≤ 250 ms | search (rate: p99 ms, ok) |', '|---|---|---|---|');
  for (const shape of SHAPES)
    for (const side of sides) {
      const s = results[side]?.[shape.name]?.sustained;
      if (!s) continue;
      const tried = Object.entries(s.steps)
        .map(
          ([k, v]) =>
            `${k}: ${v.p99}${v.missing ? ` (${v.missing} missing)` : ''}${v.start_errors ? ` (${v.start_errors} refused)` : ''} ${v.ok ? 'ok' : 'no'}`,
        )
        .join('; ');
      lines.push(`| ${shape.name} | ${name(side)} | ${s.highest_ok_rate_per_s}/s | ${tried} |`);
    }
  return lines.join('\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:peer failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
