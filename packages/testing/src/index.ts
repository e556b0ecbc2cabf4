import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger, type Logger } from '@tes/logger';

/** The infrastructure the tests use: started by scripts/infra.sh, never mocked. */
export const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
export const MONGO_URL = process.env['MONGO_URL'] ?? 'mongodb://127.0.0.1:27017';

export const REPO_ROOT = path.resolve(process.env['TES_REPO_ROOT'] ?? process.cwd());

/** A name unique to this test run: queue namespace, database name. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** A logger that keeps its lines in memory (tests assert on them, or stay quiet). */
export function memoryLogger(service = 'test'): { logger: Logger; lines: () => string[] } {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (c: Buffer) => lines.push(...c.toString().trim().split('\n').filter(Boolean)));
  return { logger: createLogger({ service, stream, level: 'debug' }), lines: () => lines };
}

/** A promise settled by hand (an answer that has not come yet). */
export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 15_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const reason = lastErr instanceof Error ? `: ${lastErr.message}` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}`);
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The Node.js flags every service runs with, as in deploy/Dockerfile and scripts/up.sh: a young
 * generation of 1 MB semi-spaces keeps an idle service under 80 MB RSS (docs/operations.md#memory).
 */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=1'] as const;

/**
 * One service's own flags, after SERVICE_NODE_ARGS, as in its `start` script and scripts/up.sh.
 * task-orchestrator: V8's old generation capped at 256 MB, what Node.js gives it in its 512 MiB
 * container (deploy/k8s, docker-compose.prod.yml). On a host without a memory limit Node.js sizes
 * the heap from the host's RAM (4 GB on a 24 GB machine), and V8 let the garbage of the tasks in
 * flight (promoted out of the 1 MB young generation) and the socket buffers it holds pile up to
 * more than twice the live heap before a full GC: +60 MB of RSS at 30 tasks/s (docs/operations.md#memory).
 */
const OWN_NODE_ARGS: Readonly<Record<string, readonly string[]>> = {
  'task-orchestrator': ['--max-old-space-size=256'],
};

/** The Node.js flags a service runs with (SERVICE_NODE_ARGS and its own). */
export function serviceNodeArgs(name: string): string[] {
  return [...SERVICE_NODE_ARGS, ...(OWN_NODE_ARGS[name] ?? [])];
}

/**
 * Starts a built service (`services/<name>/dist/main.js`) as a real process; `nodeArgs` go before
 * the script, after serviceNodeArgs (so they may override them; e.g. --cpu-prof).
 */
export function startService(name: string, env: Record<string, string>, nodeArgs: readonly string[] = []): ServiceProcess {
  const logDir = path.join(REPO_ROOT, '.run', 'test-logs');
  mkdirSync(logDir, { recursive: true });
  const file = createWriteStream(path.join(logDir, `${name}-${Date.now()}.log`));
  const args = [...serviceNodeArgs(name), ...nodeArgs, path.join(REPO_ROOT, 'services', name, 'dist', 'main.js')];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (c: Buffer) => {
    out += c.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
    file.write(c);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // 'close' comes once stdout and stderr are drained too; output can still arrive after 'exit'.
  child.on('close', () => file.end());
  return {
    name,
    child,
    output: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Resolves once `/readyz` answers 200; rejects at once if the process exits first, else after `timeoutMs`. */
export async function waitReady(port: number, proc?: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc && (proc.child.exitCode !== null || proc.child.signalCode !== null)) {
      throw new Error(
        `${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}) before it was ready:\n${proc.output().slice(-3000)}`,
      );
    }
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for readiness of ${proc?.name ?? port}\n${proc?.output().slice(-3000) ?? ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  receivedAt: number;
}

export type ReceiverBehaviour = 'ok' | 'fail' | 'slow' | 'redirect' | 'close';

/** A real HTTP receiver for webhooks; its answer can be changed while it runs. */
export async function startReceiver(): Promise<{
  url: string;
  port: number;
  received: ReceivedRequest[];
  behave(b: ReceiverBehaviour, slowMs?: number): void;
  close(): Promise<void>;
}> {
  const received: ReceivedRequest[] = [];
  let behaviour: ReceiverBehaviour = 'ok';
  let slowMs = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      });
      switch (behaviour) {
        case 'ok':
          res.writeHead(200).end('ok');
          break;
        case 'fail':
          res.writeHead(500).end('fail');
          break;
        case 'slow':
          setTimeout(() => res.writeHead(200).end('late'), slowMs);
          break;
        case 'redirect':
          res.writeHead(302, { Location: 'http://127.0.0.1:1/elsewhere' }).end();
          break;
        case 'close':
          req.socket.destroy();
          break;
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    received,
    behave(b, ms = 0) {
      behaviour = b;
      slowMs = ms;
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Ports handed to child processes come from 20000-31999, below Linux's ephemeral range
 * (32768-60999): a port the kernel picked with listen(0) can be taken by any outgoing
 * connection (to RabbitMQ, the database, ...) between this probe and the child's own listen,
 * which was seen as EADDRINUSE in CI. Each jest worker scans its own slice of the range.
 */
const PORT_FLOOR = 20_000;
const PORT_SLICE = 3_000;
let nextPortOffset = (process.pid * 7) % PORT_SLICE;

/** A TCP port on loopback that is free now and that no outgoing connection will take. */
export async function freePort(): Promise<number> {
  const worker = (Number(process.env['JEST_WORKER_ID'] ?? '1') - 1) % 4;
  for (let tries = 0; tries < PORT_SLICE; tries++) {
    const port = PORT_FLOOR + worker * PORT_SLICE + (nextPortOffset++ % PORT_SLICE);
    if (await canListen(port)) return port;
  }
  throw new Error("freePort: no free port in this worker's range");
}

function canListen(port: number): Promise<boolean> {
  const server = http.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

/** One HTTP(S) request; accepts the development certificate. */
export async function request(
  method: string,
  url: string,
  options: { headers?: Record<string, string>; body?: string | object } = {},
): Promise<HttpResult> {
  const { default: https } = await import('node:https');
  const u = new URL(url);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(u, { method, headers, rejectUnauthorized: false, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export interface ProcessRun {
  /** The exit code (1 when the process could not be run). */
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time from the start to the exit. */
  ms: number;
}

/** Runs a Node.js script (a service's CLI) as its own process, with `env` over this process's environment. */
export async function runScript(script: string, args: readonly string[], env: Record<string, string> = {}): Promise<ProcessRun> {
  const { execFile } = await import('node:child_process');
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], { env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - started }),
    );
  });
}

/** Runs the operator CLI (scripts/admin.mjs) and returns its JSON. */
export async function admin(args: string[], env: Record<string, string> = {}): Promise<any> {
  const { spawnSync } = await import('node:child_process');
  const res = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'admin.mjs'), ...args], {
    // The tests' webhook receivers listen on 127.0.0.1 (docs/operations.md, OUTBOUND_ALLOW_PRIVATE).
    env: { ...process.env, OUTBOUND_ALLOW_PRIVATE: 'true', ...env },
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`admin ${args.join(' ')} failed (${res.status}): ${res.stderr}`);
  return JSON.parse(res.stdout);
}
export * from './rabbit.js';
export * from './tcp-proxy.js';
export * from './stack.js';
export * from './cleanup.js';
export * from './server-process.js';
export * from './own-mongo.js';
