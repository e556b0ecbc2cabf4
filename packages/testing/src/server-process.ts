/** Helpers for the servers a suite or a benchmark starts as processes of its own (OwnMongo, the chaos suite's OwnRabbit). */
import { spawnSync } from 'node:child_process';

// Unref: a pending race timer must not keep the process alive.
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * Polls `fn` every 200 ms until it answers true; throws after `timeoutMs`, with `log()` (a server's
 * log tail) in the message. An error thrown by `fn` (the server exited) ends the wait at once.
 */
export async function pollUntil(what: string, timeoutMs: number, fn: () => Promise<boolean> | boolean, log?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${log ? `\n${log()}` : ''}`);
}

/** The last `n` lines of a file (a server's log), for an error message. */
export function logTail(file: string, n = 40): string {
  const res = spawnSync('tail', ['-n', String(n), file], { encoding: 'utf8' });
  return res.stdout ?? '';
}
