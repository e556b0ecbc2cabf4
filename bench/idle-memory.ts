/**
 * Idle memory of each service: starts the stack as `pnpm bench` does (the gateway given its
 * certificate; extra Node.js flags from BENCH_NODE_ARGS), waits IDLE_WAIT_MS, and prints each
 * service's RSS, split into anonymous memory (heaps) and mapped files (the node binary).
 *
 *   pnpm exec tsx bench/idle-memory.ts
 */
import { readFileSync } from 'node:fs';
import { startStack } from '@tes/testing';
import { gatewayTlsEnv } from './lib/tls-files.js';

const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
const WAIT_MS = Number(process.env['IDLE_WAIT_MS'] ?? 5000);

function status(pid: number): Record<string, number> {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (k: string) => Math.round(Number(new RegExp(`${k}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN) / 102.4) / 10;
  return { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') };
}

const stack = await startStack({ nodeArgs: NODE_ARGS, env: { '*': { LOG_LEVEL: 'warn' }, gateway: await gatewayTlsEnv() } });
try {
  await new Promise((r) => setTimeout(r, WAIT_MS));
  const rows: Record<string, Record<string, number>> = {};
  for (const [name, proc] of stack.procs) rows[name] = status(proc.child.pid ?? 0);
  console.log(`node args: ${NODE_ARGS.join(' ') || '(none)'}`);
  console.table(rows);
} finally {
  await stack.stopAll();
}
