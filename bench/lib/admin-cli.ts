import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * The operator CLI (scripts/admin.mjs) with its JSON answer, as @tes/testing's `admin`, but run
 * without blocking this process: `admin` waits in spawnSync, and a loop of them (the fan-out's 40
 * account and webhook changes, seconds each on a busy machine) keeps the bench's own broker
 * connection from sending a heartbeat for longer than RabbitMQ waits (two 15 s intervals): the
 * broker closes it, and every publish in flight fails with "channel closed".
 */
export async function adminCli(args: string[], env: Record<string, string>): Promise<unknown> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'admin.mjs'), ...args], {
    // The benches' webhook receivers listen on 127.0.0.1 (docs/operations.md, OUTBOUND_ALLOW_PRIVATE).
    env: { ...process.env, OUTBOUND_ALLOW_PRIVATE: 'true', ...env },
    // No standard input: admin.mjs reads it to its end (an open pipe would fail its read with EAGAIN).
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`admin ${args.join(' ')} failed (${code}): ${stderr}`);
  return JSON.parse(stdout) as unknown;
}
