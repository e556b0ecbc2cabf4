/**
 * Idle memory of each service: starts the stack as `pnpm bench` does (the gateway given its
 * certificate; extra Node.js flags from BENCH_NODE_ARGS), waits IDLE_WAIT_MS, and prints each
 * service's RSS, split into anonymous memory (heaps) and mapped files (the node binary).
 *
 *   pnpm exec tsx bench/idle-memory.ts
 */
import { startStack } from '@tes/testing';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { memoryMb } from './lib/proc.js';

const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const WAIT_MS = Number(process.env['IDLE_WAIT_MS'] ?? 5000);

const stack = await startStack({ nodeArgs: NODE_ARGS, env: { '*': { LOG_LEVEL: 'warn' }, gateway: await gatewayTlsEnv() } });
try {
  await new Promise((r) => setTimeout(r, WAIT_MS));
  const rows = memoryMb(stack);
  console.log(`node args: ${NODE_ARGS.join(' ') || '(none)'}`);
  console.table(rows);
} finally {
  await stack.stopAll();
}
