/**
 * One account's throughput (issue 24): a 50-step task alone, then ten of the same account at once,
 * and the account's create latency idle and while the ten run. Every task of an account goes through
 * the account's one orchestrator partition, so this is what that partition's writer can do for one
 * customer.
 *
 *   pnpm exec tsx bench/account-throughput.ts     (STEPS=50, TASKS=10, after `pnpm build` and scripts/infra.sh up)
 *
 * Runs on a FerretDB of its own (bench/lib/own-database.ts: other clients' schema changes on the
 * machine's shared server stall every task); BENCH_SHARED_DB=1 runs on the shared one.
 */
import os from 'node:os';
import { removeStack, startStack } from '@tes/testing';
import { benchAccountKeys } from './lib/accounts.js';
import { keepAliveClient } from './lib/http-client.js';
import { startWebhookReceiver } from './lib/receiver.js';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { cpuMeter } from './lib/proc.js';
import { benchDatabase } from './lib/own-database.js';

const STEPS = Number(process.env['STEPS'] ?? 50);
const TASKS = Number(process.env['TASKS'] ?? 10);
const PROMPT = JSON.stringify({ prompt: 'Echo "a b c"' + ', then uppercase it'.repeat(STEPS - 1) });
const PROBE = JSON.stringify({ prompt: 'Echo "probe"', mode: 'test' });

const db = await benchDatabase();
console.log(`database: ${db.describe}`);
const receiver = await startWebhookReceiver();
const stack = await startStack({ mongoUrl: db.mongoUrl, env: { '*': { LOG_LEVEL: 'warn' }, gateway: await gatewayTlsEnv() } });
try {
  const [key] = await benchAccountKeys(stack, 'acct', `${receiver.base}/ok/main`, 1);
  const client = keepAliveClient(32);
  const auth = { authorization: `Bearer ${key ?? ''}` };

  const create = async (body: string): Promise<{ id: string; ms: number }> => {
    const t0 = performance.now();
    const r = await client.request('POST', `${stack.baseUrl}/tasks`, auth, body);
    if (r.status !== 201) throw new Error(`create answered ${r.status}: ${r.body}`);
    return { id: (JSON.parse(r.body) as { id: string }).id, ms: performance.now() - t0 };
  };
  const done = async (ids: string[], timeoutMs = 300_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (ids.some((id) => !receiver.completeAt.has(id))) {
      if (Date.now() > deadline) throw new Error('tasks did not complete in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  /** Creates a test-mode task every 100 ms until `until` settles: the account's create latency meanwhile. */
  const probeCreates = async (until: Promise<unknown>): Promise<number[]> => {
    const ms: number[] = [];
    let over = false;
    void until.finally(() => (over = true));
    while (!over) {
      ms.push((await create(PROBE)).ms);
      await new Promise((r) => setTimeout(r, 100));
    }
    return ms;
  };
  const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
  const round = (x: number) => Math.round(x);

  // Warm-up, then the idle create latency.
  await done([(await create(PROMPT)).id]);
  const idle: number[] = [];
  for (let i = 0; i < 30; i++) idle.push((await create(PROBE)).ms);

  const t1 = Date.now();
  const alone = await create(PROMPT);
  await done([alone.id]);
  const aloneMs = receiver.completeAt.get(alone.id)! - t1;

  const t2 = Date.now();
  const cpu = cpuMeter(stack);
  const many = await Promise.all(Array.from({ length: TASKS }, () => create(PROMPT)));
  const finished = done(many.map((m) => m.id));
  const during = await probeCreates(finished);
  await finished;
  const each = many.map((m) => receiver.completeAt.get(m.id)! - t2);
  // How much of the machine the ten used: near every core, the machine and not the partition bounds them.
  const used = cpu.stop();
  const busyS = [...used].filter(([g]) => g !== 'load generator' && g !== 'other').reduce((n, [, s]) => n + s, 0);
  const spanS = (Date.now() - t2) / 1000;

  console.log(`one account, ${STEPS}-step tasks (text tool), concurrency limit 1000000`);
  console.log(`one task alone: ${aloneMs} ms (${round((STEPS * 1000) / aloneMs)} steps/s)`);
  console.log(
    `${TASKS} at once: p50 ${round(p(each, 0.5))} ms, slowest ${Math.max(...each)} ms (${round((TASKS * STEPS * 1000) / Math.max(...each))} steps/s for the account), ${round((Math.max(...each) / aloneMs) * 10) / 10}x the time of one`,
  );
  console.log(
    `the stack used ${round((busyS / spanS) * 100) / 100} of ${os.cpus().length} cores while the ${TASKS} ran (${round((busyS * 1000) / (TASKS * STEPS))} ms of CPU per step): ${[
      ...used,
    ]
      .filter(([, s]) => s > 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([g, s]) => `${g} ${round((s / spanS) * 100) / 100}`)
      .join(', ')}`,
  );
  console.log(
    `create latency: idle p50 ${round(p(idle, 0.5))} / p99 ${round(p(idle, 0.99))} ms; while the ${TASKS} run p50 ${round(p(during, 0.5))} / p99 ${round(p(during, 0.99))} ms (${during.length} creates, ${round((p(during, 0.5) / p(idle, 0.5)) * 10) / 10}x idle at p50)`,
  );
} finally {
  await stack.stopAll();
  await removeStack(stack);
  await receiver.close();
  await db.close();
}
