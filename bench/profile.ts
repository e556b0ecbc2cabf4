/**
 * `pnpm bench:profile`: where the time goes under end-to-end load. Starts the five services with
 * `node --cpu-prof` and database command counting (`TES_DB_COMMAND_STATS`), sends single-step
 * sandbox tasks at one rate, and writes to BENCH_PROFILE (a directory, default
 * bench/results/profile) the raw .cpuprofile files (open them in Chrome DevTools), and
 * summary.md: the top self-time functions and packages per service during the load, and the
 * database commands per task per service.
 *
 * BENCH_PROFILE_RATE (tasks/s, default 50) and BENCH_SECONDS (default 10) set the load;
 * BENCH_NODE_ARGS adds Node.js flags to every service (e.g. --max-semi-space-size=2).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { removeStack, startStack, type ServiceName, type Stack } from '@tes/testing';
import { summarizeProfile } from './lib/cpuprofile.js';
import { cpuMeter, rssMb } from './lib/proc.js';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { keepAliveClient } from './lib/http-client.js';
import { openLoad, summarize } from './lib/load.js';
import { benchAccountKeys } from './lib/accounts.js';
import { startWebhookReceiver } from './lib/receiver.js';

const DIR = path.resolve(process.env['BENCH_PROFILE'] ?? 'bench/results/profile');
const RATE = Number(process.env['BENCH_PROFILE_RATE'] ?? 50);
const DURATION_MS = Number(process.env['BENCH_SECONDS'] ?? 10) * 1000;
const CPU_DIR = path.join(DIR, 'cpu');
const DB_DIR = path.join(DIR, 'db');

const log = (msg: string) => process.stderr.write(`profile: ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Database commands sent so far by each service, by "command collection" (from TES_DB_COMMAND_STATS). */
async function commandCounts(stack: Stack): Promise<Map<ServiceName, Record<string, number>>> {
  for (const proc of stack.procs.values()) proc.child.kill('SIGUSR2');
  await sleep(300);
  const out = new Map<ServiceName, Record<string, number>>();
  for (const name of stack.procs.keys()) {
    const file = path.join(DB_DIR, `${stack.envOf(name)['MONGO_DB'] ?? ''}.json`);
    out.set(name, existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>) : {});
  }
  return out;
}

async function main(): Promise<void> {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(CPU_DIR, { recursive: true });
  mkdirSync(DB_DIR, { recursive: true });
  const receiver = await startWebhookReceiver();
  const stack = await startStack({
    env: {
      '*': { LOG_LEVEL: 'warn', TES_DB_COMMAND_STATS: DB_DIR },
      gateway: await gatewayTlsEnv(),
      'webhook-dispatcher': { WEBHOOK_RETRY_SCHEDULE_MS: '500,500,500,500', POLL_INTERVAL_MS: '100' },
    },
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${CPU_DIR}`, ...(process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean)],
  });
  const pids = new Map([...stack.procs].map(([name, p]) => [p.child.pid, name]));
  await sleep(1500);
  const rssIdle = rssMb(stack);
  const client = keepAliveClient(512);
  let loadStart = 0;
  let loadEnd = 0;
  let before = new Map<ServiceName, Record<string, number>>();
  let after = before;
  let tasks = 0;
  let cpuUsed = new Map<string, number>();
  const lines: string[] = [];
  try {
    const keys = await benchAccountKeys(stack, 'prof', `${receiver.base}/ok/main`);
    let turn = 0;
    const body = JSON.stringify({ prompt: 'Echo "bench"' });
    const created = new Map<string, number>();
    const create = async (scheduled: number) => {
      const r = await client.request(
        'POST',
        `${stack.baseUrl}/tasks`,
        { authorization: `Bearer ${keys[turn++ % keys.length] ?? ''}` },
        body,
      );
      if (r.status !== 201) throw new Error(`create answered ${r.status}`);
      created.set((JSON.parse(r.body) as { id: string }).id, performance.timeOrigin + scheduled);
      return '201';
    };
    // Warm-up (JIT, connection pools, first-use compilation), not counted.
    await openLoad({ ratePerSec: RATE, durationMs: 2000, warmupMs: 0, fire: (_i, s) => create(s) });
    while ([...created.keys()].some((id) => !receiver.completeAt.has(id))) await sleep(100);
    created.clear();

    before = await commandCounts(stack);
    const cpu = cpuMeter(stack);
    loadStart = Date.now();
    const r = await openLoad({ ratePerSec: RATE, durationMs: DURATION_MS, warmupMs: 0, fire: (_i, s) => create(s) });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && [...created.keys()].some((id) => !receiver.completeAt.has(id))) await sleep(50);
    loadEnd = Date.now();
    await sleep(500); // the last read-model updates and dispatcher bookkeeping
    cpuUsed = cpu.stop();
    after = await commandCounts(stack);
    const rssAfter = rssMb(stack);
    tasks = created.size;
    const e2e = summarize(
      [...created].flatMap(([id, at]) => (receiver.completeAt.has(id) ? [(receiver.completeAt.get(id) ?? 0) - at] : [])),
    );
    lines.push(
      `# Profile: ${RATE} single-step sandbox tasks/s for ${DURATION_MS / 1000} s`,
      '',
      `${tasks} tasks, create errors ${r.errors}, create p50 ${summarize(r.latenciesMs).p50} ms p99 ${summarize(r.latenciesMs).p99} ms; ` +
        `end to end p50 ${e2e.p50} ms p99 ${e2e.p99} ms (${e2e.count} complete).`,
      '',
      `RSS MB idle (before the warm-up, with --cpu-prof): ${JSON.stringify(rssIdle)}; after the load: ${JSON.stringify(rssAfter)}.`,
      '',
      `## CPU per task (ms, from /proc; ${((loadEnd + 500 - loadStart) / 1000).toFixed(1)} s window, 2 cores = ${(((loadEnd + 500 - loadStart) / 1000) * 2).toFixed(1)} CPU s)`,
      '',
      ...[...cpuUsed]
        .map(([g, v]) => [g, (v * 1000) / Math.max(created.size, 1)] as const)
        .sort((a, b) => b[1] - a[1])
        .map(([g, ms]) => `- ${g}: ${ms.toFixed(2)}`),
      `- total: ${[...cpuUsed].reduce((sum, [, v]) => sum + (v * 1000) / Math.max(created.size, 1), 0).toFixed(2)}`,
      '',
      '## Database commands per task',
      '',
    );
  } finally {
    client.close();
    await stack.stopAll();
    await receiver.close();
  }
  const stoppedAt = Date.now();
  await removeStack(stack);

  let allTotal = 0;
  for (const [name, counts] of after) {
    const prev = before.get(name) ?? {};
    const delta = Object.entries(counts)
      .map(([k, v]) => [k, (v - (prev[k] ?? 0)) / Math.max(tasks, 1)] as const)
      .filter(([, v]) => v >= 0.005)
      .sort((a, b) => b[1] - a[1]);
    const total = delta.reduce((s, [, v]) => s + v, 0);
    allTotal += total;
    lines.push(`- **${name}**: ${total.toFixed(2)} (${delta.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ') || 'none'})`);
  }
  lines.push(`- **all services**: ${allTotal.toFixed(2)}`, '');

  for (const file of readdirSync(CPU_DIR).filter((f) => f.endsWith('.cpuprofile'))) {
    const pid = Number(/\.(\d+)\.\d+\.\d+\.cpuprofile$/.exec(file)?.[1]);
    const name = pids.get(pid) ?? `pid ${pid}`;
    // Only the load: from its start to its end, measured back from the process exit (about when stopAll returned).
    const s = summarizeProfile(path.join(CPU_DIR, file), {
      fromMsBeforeEnd: stoppedAt - loadStart,
      toMsBeforeEnd: stoppedAt - loadEnd,
    });
    lines.push(
      `## ${name}: ${s.busyMs} ms busy of ${s.totalMs} ms sampled (${((s.busyMs / Math.max(tasks, 1)) * 1000).toFixed(0)} µs CPU per task)`,
      '',
      'By package: ' + s.packages.map((p) => `${p.name} ${p.pct} %`).join(', '),
      '',
      '| self ms | % | function | where |',
      '|---|---|---|---|',
      ...s.functions.map((f) => `| ${f.ms} | ${f.pct} | ${f.name} | ${f.where} |`),
      '',
    );
  }
  const md = `${lines.join('\n')}\n`;
  writeFileSync(path.join(DIR, 'summary.md'), md);
  process.stdout.write(md);
  log(`written: ${path.join(DIR, 'summary.md')} and the .cpuprofile files in ${CPU_DIR}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`profile failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
