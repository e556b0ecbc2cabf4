import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, runScript, waitFor } from '@tes/testing';

/**
 * runService in a real child process (the built package, as the services run it): a tiny service
 * whose start and stop write to a journal, its ops server probed over HTTP, stopped with SIGTERM.
 */
const DIST = path.resolve(__dirname, '../dist/index.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'run-service-'));
const script = path.join(dir, 'tiny-service.mjs');

beforeAll(() => {
  writeFileSync(
    script,
    `
import { appendFileSync } from 'node:fs';
import { runService } from ${JSON.stringify(pathToFileURL(DIST).href)};

class KeyRingError extends Error {}
const note = (line) => appendFileSync(process.env.JOURNAL, line + '\\n');

await runService({
  name: 'tiny',
  configSchema: {
    type: 'object',
    properties: {
      OPS_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
      OPS_HOST: { type: 'string', default: '127.0.0.1' },
      LOG_LEVEL: { type: 'string', default: 'info' },
      SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 0, default: 3000 },
      FAIL: { type: 'string', enum: ['', 'known', 'unknown'], default: '' },
    },
    required: ['OPS_PORT', 'OPS_HOST', 'LOG_LEVEL', 'SHUTDOWN_TIMEOUT_MS', 'FAIL'],
  },
  knownErrors: [KeyRingError],
  start: async ({ config, logger, metrics }) => {
    if (config.FAIL === 'known') throw new KeyRingError('TINY_KEYS has no key');
    if (config.FAIL === 'unknown') throw new Error('boom');
    metrics.tasksTotal.inc({ status: 'complete' });
    logger.info('tiny started');
    note('started');
    return {
      ready: () => !process.env.NOT_READY,
      stop: async (timeoutMs) => note('stop ' + timeoutMs),
      close: async () => {
        const ops = await fetch('http://127.0.0.1:' + config.OPS_PORT + '/healthz').then(() => 'open', () => 'closed');
        note('close, ops server ' + ops);
      },
    };
  },
});
`,
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function journalOf(name: string): { file: string; lines: () => string[] } {
  const file = path.join(dir, name);
  return { file, lines: () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []) };
}

describe('runService', () => {
  it('serves /healthz, /readyz and /metrics; on SIGTERM stops the service, then the ops server, then closes it, and exits 0', async () => {
    expect(existsSync(DIST)).toBe(true);
    const port = await freePort();
    const journal = journalOf('graceful.log');
    const child = spawn(process.execPath, [script], {
      env: { ...process.env, OPS_PORT: String(port), JOURNAL: journal.file, SHUTDOWN_TIMEOUT_MS: '2500' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const health = await waitFor(() => fetch(`http://127.0.0.1:${port}/healthz`), { what: 'the ops server', timeoutMs: 20_000 });
      expect(await health.json()).toEqual({ status: 'ok' });
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: 'ready' }]);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/tasks_total\{.*service="tiny".*\} 1/);

      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    expect(journal.lines()).toEqual(['started', 'stop 2500', 'close, ops server closed']);
    const messages = output
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { message: string }).message);
    expect(messages).toEqual(['tiny started', 'ops server listening', 'shutting down', 'stopped']);
  });

  it('answers /readyz 503 while the service is not ready', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [script], {
      env: { ...process.env, OPS_PORT: String(port), JOURNAL: journalOf('not-ready.log').file, NOT_READY: '1' },
      stdio: 'ignore',
    });
    try {
      const ready = await waitFor(() => fetch(`http://127.0.0.1:${port}/readyz`), { what: 'the ops server', timeoutMs: 20_000 });
      expect([ready.status, await ready.json()]).toEqual([503, { status: 'not_ready' }]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('exits 1 naming every bad variable before starting anything', async () => {
    const journal = journalOf('bad-config.log');
    const run = await runScript(script, [], { OPS_PORT: 'abc', SHUTDOWN_TIMEOUT_MS: '-1', JOURNAL: journal.file });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^tiny: invalid configuration:\n {2}- OPS_PORT: .*\n {2}- SHUTDOWN_TIMEOUT_MS: .*\n$/);
    expect(journal.lines()).toEqual([]);
  });

  it('exits 1 with one line and no stack for a known start-up error', async () => {
    const run = await runScript(script, [], { OPS_PORT: '0', FAIL: 'known', JOURNAL: journalOf('known.log').file });
    expect([run.code, run.stderr]).toEqual([1, 'tiny: TINY_KEYS has no key\n']);
  });

  it('exits 1 with one line and no stack when OPS_PORT is in use', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const run = await runScript(script, [], { OPS_PORT: String(port), JOURNAL: journalOf('in-use.log').file });
      expect([run.code, run.stderr]).toEqual([1, `tiny: OPS_PORT ${port} is in use (EADDRINUSE)\n`]);
    } finally {
      taken.close();
    }
  });

  it('exits 1 with the stack of any other start-up error', async () => {
    const run = await runScript(script, [], { OPS_PORT: '0', FAIL: 'unknown', JOURNAL: journalOf('unknown.log').file });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^tiny: failed to start: Error: boom\n {4}at /);
  });
});
