/**
 * Idle memory of each service: starts the stack as `pnpm bench` does (the gateway given its
 * certificate; extra Node.js flags from BENCH_NODE_ARGS), waits IDLE_WAIT_MS, and prints each
 * service's RSS, split into anonymous memory (heaps) and mapped files (the node binary). Then
 * what the idle stack costs in CPU (its pollers, sweepers and timers, and the database work they
 * cause), metered over IDLE_CPU_MS: the floor under every CPU-per-task figure at low rates.
 *
 *   pnpm exec tsx bench/idle-memory.ts
 */
import { removeStack, startStack } from '@tes/testing';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { cpuMeter, memoryMb } from './lib/proc.js';

const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const WAIT_MS = Number(process.env['IDLE_WAIT_MS'] ?? 5000);
const CPU_MS = Number(process.env['IDLE_CPU_MS'] ?? 20_000);

const stack = await startStack({ nodeArgs: NODE_ARGS, env: { '*': { LOG_LEVEL: 'warn' }, gateway: await gatewayTlsEnv() } });
try {
  await new Promise((r) => setTimeout(r, WAIT_MS));
  const rows = memoryMb(stack);
  console.log(`node args: ${NODE_ARGS.join(' ') || '(none)'}`);
  console.table(rows);
  const meter = cpuMeter(stack);
  await new Promise((r) => setTimeout(r, CPU_MS));
  const used = meter.stop();
  console.log(`CPU of the idle stack over ${CPU_MS / 1000} s, in % of one core:`);
  console.table(Object.fromEntries([...used].map(([g, s]) => [g, { pct_of_a_core: Math.round(((s * 1000) / CPU_MS) * 1000) / 10 }])));
} finally {
  await stack.stopAll();
  await removeStack(stack);
}
