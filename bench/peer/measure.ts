/**
 * One measured step of `pnpm bench:peer`, the same for this service and for the peer: open-model
 * arrivals at a fixed rate, each task's latency from its scheduled send time to its completion
 * call at the receiver, and the CPU its processes used over the whole window (the load, then the
 * wait for the last completion) divided by the tasks sent.
 */
import { cpuPerTaskMs, isStackProcess, type CpuPerTask } from '../lib/proc.js';
import { median, medianSummary, openLoad, summarize, type LatencySummary } from '../lib/load.js';

export interface StepSettings {
  durationMs: number;
  warmupMs: number;
  runs: number;
}

export interface StepResult extends LatencySummary {
  /** Tasks accepted whose completion never reached the receiver within 30 s of the last arrival. */
  missing: number;
  /** Requests refused or failed (a create, or a workflow start). */
  start_errors: number;
  /** Why they failed, and how many of each. */
  start_error_kinds?: Record<string, number>;
  cpu_ms_per_task: number;
  /**
   * The part of it used by processes no other work on the machine uses: this service's five
   * services, or the peer's server and worker. FerretDB, PostgreSQL and RabbitMQ are shared with
   * whatever else runs on the machine, so their share of `cpu_ms_per_task` is an upper bound.
   */
  cpu_ms_per_task_own: number;
  cpu_ms_per_task_by_process: Record<string, number>;
  /** Each run's p99, when there were several (the figure above is their median). */
  p99_of_runs: number[];
}

export interface Side {
  /** Starts one task; resolves with its id once it was accepted. */
  fire(): Promise<string>;
  /** A CPU meter over this side's processes, from now until `stop`. */
  meter(): { stop(): Map<string, number> };
  /** When each task's completion arrived (the receiver's map, by task id). */
  completeAt: Map<string, number>;
}

async function once(side: Side, rate: number, s: StepSettings) {
  const tasks: { id: string; at: number; measured: boolean }[] = [];
  const meter = side.meter();
  const load = await openLoad({
    ratePerSec: rate,
    durationMs: s.durationMs,
    warmupMs: s.warmupMs,
    fire: async (i, scheduled) => {
      const id = await side.fire();
      // The first `warmupMs` of arrivals are not measured (as `openLoad` itself cuts them).
      tasks.push({ id, at: performance.timeOrigin + scheduled, measured: i >= (s.warmupMs / 1000) * rate });
      return 'accepted';
    },
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && tasks.some((t) => !side.completeAt.has(t.id))) await new Promise((r) => setTimeout(r, 50));
  const cpu: CpuPerTask = cpuPerTaskMs(meter.stop(), load.sent);
  const latencies: number[] = [];
  let missing = 0;
  for (const t of tasks.filter((x) => x.measured)) {
    const got = side.completeAt.get(t.id);
    if (got === undefined) missing++;
    else latencies.push(got - t.at);
  }
  const errorKinds = Object.entries(load.statuses).filter(([k]) => k.startsWith('error: '));
  return { summary: summarize(latencies), missing, startErrors: load.errors, errorKinds, cpu };
}

/** Process groups of `cpuMeter` that serve every stack on the machine, not only the one measured. */
const SHARED = /^(ferretdb|postgresql|rabbitmq)/;

function ownMs(cpu: CpuPerTask): number {
  const own = Object.entries(cpu.by_process).filter(([g]) => isStackProcess(g) && !SHARED.test(g));
  return Math.round(own.reduce((n, [, ms]) => n + ms, 0) * 100) / 100;
}

/** `runs` runs at `rate` (medians), with a pause after each so one run's tail does not load the next. */
export async function measureStep(side: Side, rate: number, s: StepSettings): Promise<StepResult> {
  const runs: Awaited<ReturnType<typeof once>>[] = [];
  for (let run = 0; run < s.runs; run++) {
    runs.push(await once(side, rate, s));
    await new Promise((r) => setTimeout(r, 2000));
  }
  const groups = new Set(runs.flatMap((r) => Object.keys(r.cpu.by_process)));
  return {
    ...medianSummary(runs.map((r) => r.summary)),
    missing: Math.max(...runs.map((r) => r.missing)),
    start_errors: runs.reduce((n, r) => n + r.startErrors, 0),
    ...(runs.some((r) => r.startErrors > 0)
      ? {
          start_error_kinds: runs
            .flatMap((r) => r.errorKinds)
            .reduce<Record<string, number>>((all, [k, n]) => ({ ...all, [k.slice(7)]: (all[k.slice(7)] ?? 0) + n }), {}),
        }
      : {}),
    cpu_ms_per_task: median(runs.map((r) => r.cpu.stack)),
    cpu_ms_per_task_own: median(runs.map((r) => ownMs(r.cpu))),
    cpu_ms_per_task_by_process: Object.fromEntries([...groups].map((g) => [g, median(runs.map((r) => r.cpu.by_process[g] ?? 0))])),
    p99_of_runs: runs.map((r) => r.summary.p99),
  };
}

/** The bar for a sustained rate: p99 ≤ 250 ms, nothing missing, nothing refused. */
export const sustains = (r: StepResult) => r.p99 <= 250 && r.missing === 0 && r.start_errors === 0;
