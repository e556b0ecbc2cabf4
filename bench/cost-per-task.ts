/**
 * What one task costs: runs N single-step tasks with webhooks through the whole stack and divides
 *  - the MongoDB-wire server's own command counters (FerretDB's /debug/metrics), after subtracting
 *    what the idle stack sends in the same time (pollers, sweepers): on FerretDB every command is
 *    at least one PostgreSQL transaction;
 *  - the CPU time of each process group (our five services, FerretDB, PostgreSQL, RabbitMQ),
 *    from /proc: which of them bounds the rate on this machine;
 * by N.
 *
 *   pnpm exec tsx bench/cost-per-task.ts        (TASKS=1000)
 *
 * ORCHESTRATORS=3 runs that many orchestrator replicas (the partition group spreads the partitions
 * over them; their CPU adds up in the task-orchestrator row): what the balancing costs.
 *
 * Runs on a FerretDB of its own (bench/lib/own-database.ts: other clients' schema changes on the
 * machine's shared server stall every task); BENCH_SHARED_DB=1 runs on the shared one.
 */
import os from 'node:os';
import { freePort, removeStack, startService, startStack, waitReady, type ServiceProcess } from '@tes/testing';
import { keepAliveClient } from './lib/http-client.js';
import { benchAccountKeys } from './lib/accounts.js';
import { startWebhookReceiver } from './lib/receiver.js';
import { commandCounts, countsSince, perTask, type CommandCounts } from './lib/db-commands.js';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { cpuMeter, cpuPerTaskMs } from './lib/proc.js';
import { benchDatabase } from './lib/own-database.js';

const TASKS = Number(process.env['TASKS'] ?? 1000);
const receiver = await startWebhookReceiver();
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const ORCHESTRATORS = Number(process.env['ORCHESTRATORS'] ?? 1);
const db = await benchDatabase();
process.stderr.write(`database: ${db.describe}\n`);
const stack = await startStack({
  mongoUrl: db.mongoUrl,
  nodeArgs: NODE_ARGS,
  env: { '*': { LOG_LEVEL: 'warn' }, gateway: await gatewayTlsEnv() },
});
const replicas: ServiceProcess[] = [];
try {
  for (let i = 1; i < ORCHESTRATORS; i++) {
    const port = await freePort();
    const proc = startService('task-orchestrator', { ...stack.envOf('task-orchestrator'), OPS_PORT: String(port) }, NODE_ARGS);
    replicas.push(proc);
    await waitReady(port, proc);
  }
  const keys = await benchAccountKeys(stack, 'dbcmd', `${receiver.base}/ok/main`, 4);
  const client = keepAliveClient(64);
  // Time for the partition group to spread the partitions (a few beats).
  await new Promise((r) => setTimeout(r, ORCHESTRATORS > 1 ? 8000 : 2000));

  // The idle stack's own traffic over a fixed window, to subtract.
  const idleMs = 5000;
  const counts = async (): Promise<CommandCounts> => {
    const c = await commandCounts(db.debugUrl);
    if (!c) throw new Error(`no FerretDB /debug/metrics at ${db.debugUrl}`);
    return c;
  };
  const idle0 = await counts();
  await new Promise((r) => setTimeout(r, idleMs));
  const idle = countsSince(await counts(), idle0);

  const cpu = cpuMeter(stack, 250, new Map(replicas.map((r) => [r.child.pid ?? 0, 'task-orchestrator'])));
  const t0 = Date.now();
  const before = await counts();
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, TASKS - i) }, (_, j) =>
        client.request(
          'POST',
          `${stack.baseUrl}/tasks`,
          { authorization: `Bearer ${keys[(i + j) % keys.length] ?? ''}` },
          '{"prompt":"Echo \\"db\\""}',
        ),
      ),
    );
    for (const r of batch) {
      if (r.status !== 201) throw new Error(`create answered ${r.status}: ${r.body}`);
      ids.push((JSON.parse(r.body) as { id: string }).id);
    }
  }
  const deadline = Date.now() + 120_000;
  while (ids.some((id) => !receiver.completeAt.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 1000)); // late clears and marks
  const elapsedMs = Date.now() - t0;
  const run = countsSince(await counts(), before);
  const cpuUsed = cpu.stop();

  const rows = perTask(run, TASKS, elapsedMs, idle, idleMs);
  const total = Object.values(rows).reduce((x, y) => x + y, 0);
  const completed = ids.filter((id) => receiver.completeAt.has(id)).length;
  console.log(`${TASKS} tasks, ${completed} task.complete webhooks received, ${elapsedMs} ms, ${ORCHESTRATORS} orchestrator replica(s)`);
  console.table(rows);
  console.log(`database commands per task: ${Math.round(total * 10) / 10}`);
  const perTaskCpu = cpuPerTaskMs(cpuUsed, TASKS);
  console.table(Object.fromEntries(Object.entries(perTaskCpu.by_process).map(([g, ms]) => [g, { cpu_ms_per_task: ms }])));
  console.table(
    Object.fromEntries(
      [...cpu.syscalls()].map(([g, c]) => [
        g,
        {
          read_syscalls_per_task: Math.round((c.reads / TASKS) * 10) / 10,
          write_syscalls_per_task: Math.round((c.writes / TASKS) * 10) / 10,
        },
      ]),
    ),
  );
  console.log(
    `CPU per task (the stack: services, FerretDB, its PostgreSQL backends, RabbitMQ): ${perTaskCpu.stack} ms, so at most ${perTaskCpu.cpu_bound_tasks_per_s} tasks/s on ${os.cpus().length} cores`,
  );
} finally {
  await Promise.all(replicas.map((r) => r.stop('SIGTERM')));
  await stack.stopAll();
  await removeStack(stack);
  await receiver.close();
  await db.close();
}
