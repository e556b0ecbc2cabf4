/**
 * Private infrastructure for the chaos suite: a RabbitMQ node and a MongoDB-wire server
 * (@tes/testing's OwnMongo: FerretDB on its own PostgreSQL database, or a mongod when one is on
 * the PATH) that belong to this test run alone, so the suite can stop, kill and restart them
 * without touching the machine's shared broker (127.0.0.1:5672) and database (127.0.0.1:27017)
 * that every other test uses.
 *
 * Everything lives in one temporary directory; `destroy()` stops the processes (and drops the
 * PostgreSQL database); `chaosRoot().remove()` removes the directory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  openSync,
  closeSync,
  rmSync,
  writeFileSync,
  chmodSync,
  mkdtempSync,
  readdirSync,
  copyFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { freePort, logTail, pollUntil } from '@tes/testing';

// Unref: a pending race timer must not keep the test process alive.
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export async function tcpOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(1000, () => done(false));
  });
}

const RABBIT_LIB = '/usr/lib/rabbitmq/bin';

/**
 * A RabbitMQ node of its own: own node name, AMQP port, distribution port, Erlang cookie
 * (HOME), config file (one loopback listener), empty plugin list, data and log directories.
 * It registers with the machine's epmd under its own name, which disturbs nobody.
 */
export class OwnRabbit {
  readonly node: string;
  readonly dir: string;
  port = 0;
  distPort = 0;
  private child: ChildProcess | undefined;
  private startCount = 0;
  private lastLog = '';

  /** How the server process ended if it ended without being told to (kill/restart/destroy), else null. */
  exitedByItself(): string | null {
    const child = this.child;
    if (!child || (child.exitCode === null && child.signalCode === null)) return null;
    return `exit code ${child.exitCode}, signal ${child.signalCode}; log:\n${logTail(this.lastLog)}`;
  }

  /** Why this machine cannot run a second node, or null when it can. */
  static unavailable(): string | null {
    if (!existsSync(path.join(RABBIT_LIB, 'rabbitmq-server')))
      return `${RABBIT_LIB}/rabbitmq-server not found (RabbitMQ is not installed from the Debian package)`;
    if (!existsSync(path.join(RABBIT_LIB, 'rabbitmqctl'))) return `${RABBIT_LIB}/rabbitmqctl not found`;
    return null;
  }

  constructor(root: string) {
    this.node = `chaos-${process.pid}-${randomBytes(2).toString('hex')}@localhost`;
    this.dir = path.join(root, 'rabbitmq');
    for (const d of ['home', 'mnesia', 'log']) mkdirSync(path.join(this.dir, d), { recursive: true });
    const cookie = path.join(this.dir, 'home', '.erlang.cookie');
    writeFileSync(cookie, `CHAOS${randomBytes(16).toString('hex').toUpperCase()}`);
    chmodSync(cookie, 0o400);
    writeFileSync(path.join(this.dir, 'rabbitmq-env.conf'), '');
    writeFileSync(path.join(this.dir, 'enabled_plugins'), '[].\n');
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  private env(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      HOME: path.join(this.dir, 'home'),
      RABBITMQ_CONF_ENV_FILE: path.join(this.dir, 'rabbitmq-env.conf'),
      RABBITMQ_NODENAME: this.node,
      RABBITMQ_NODE_PORT: String(this.port),
      RABBITMQ_DIST_PORT: String(this.distPort),
      RABBITMQ_MNESIA_BASE: path.join(this.dir, 'mnesia'),
      RABBITMQ_LOG_BASE: path.join(this.dir, 'log'),
      RABBITMQ_CONFIG_FILE: path.join(this.dir, 'rabbitmq.conf'),
      RABBITMQ_ENABLED_PLUGINS_FILE: path.join(this.dir, 'enabled_plugins'),
      RABBITMQ_PLUGINS_EXPAND_DIR: path.join(this.dir, 'plugins-expand'),
      RABBITMQ_PID_FILE: path.join(this.dir, 'rabbitmq.pid'),
    };
  }

  ctl(args: string[], timeoutMs = 30_000): { status: number | null; out: string } {
    const res = spawnSync(path.join(RABBIT_LIB, 'rabbitmqctl'), ['-n', this.node, ...args], {
      env: this.env(),
      cwd: this.dir,
      encoding: 'utf8',
      timeout: timeoutMs,
    });
    return { status: res.status, out: `${res.stdout ?? ''}${res.stderr ?? ''}` };
  }

  /** Starts the node (the same ports and data on a restart) and waits until it accepts AMQP. */
  async start(): Promise<void> {
    if (!this.port) {
      this.port = await freePort();
      this.distPort = await freePort();
      writeFileSync(
        path.join(this.dir, 'rabbitmq.conf'),
        [`listeners.tcp.default = 127.0.0.1:${this.port}`, 'loopback_users = none', 'disk_free_limit.absolute = 10MB', ''].join('\n'),
      );
    }
    const log = path.join(this.dir, `server-${++this.startCount}.log`);
    this.lastLog = log;
    const fd = openSync(log, 'a');
    this.child = spawn(path.join(RABBIT_LIB, 'rabbitmq-server'), [], { env: this.env(), cwd: this.dir, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const child = this.child;
    await pollUntil(
      `RabbitMQ node ${this.node} on port ${this.port}`,
      // Erlang boots slowly on a loaded 2-core machine (seen: over 60 s while other jobs ran).
      120_000,
      async () => {
        if (child.exitCode !== null) throw new Error(`rabbitmq-server exited with ${child.exitCode}:\n${logTail(log)}`);
        return tcpOpen(this.port);
      },
      () => logTail(log),
    );
    const ready = this.ctl(['await_startup', '--timeout', '60'], 70_000);
    if (ready.status !== 0) throw new Error(`rabbitmqctl await_startup failed: ${ready.out}`);
  }

  /** Stops the node: `rabbitmqctl stop` (clean), or SIGKILL of the Erlang VM (`hard`). */
  async stop(hard = false): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    if (hard) {
      const pid = this.osPid();
      if (pid) process.kill(pid, 'SIGKILL');
      else child.kill('SIGKILL');
    } else {
      const res = this.ctl(['stop'], 60_000);
      if (res.status !== 0) child.kill('SIGTERM');
    }
    await Promise.race([exited, sleep(30_000)]);
    await pollUntil(`port ${this.port} to close`, 30_000, async () => !(await tcpOpen(this.port)));
    this.child = undefined;
  }

  /** The Erlang VM's OS pid (the server script may be its parent). */
  private osPid(): number | undefined {
    const res = this.ctl(['eval', 'os:getpid().'], 10_000);
    const m = /"(\d+)"/.exec(res.out);
    return m ? Number(m[1]) : this.child?.pid;
  }

  async restart(downMs: number, hard = false): Promise<{ downMs: number; stopMs: number; startMs: number }> {
    const t0 = Date.now();
    await this.stop(hard);
    const stopMs = Date.now() - t0;
    await sleep(downMs);
    const t1 = Date.now();
    await this.start();
    return { downMs: Date.now() - t0, stopMs, startMs: Date.now() - t1 };
  }

  /** Messages ready and unacknowledged per queue (the busiest first). */
  queues(): { name: string; ready: number; unacked: number; consumers: number }[] {
    const res = this.ctl(['-q', 'list_queues', 'name', 'messages_ready', 'messages_unacknowledged', 'consumers'], 20_000);
    return res.out
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f.length === 4 && /^\d+$/.test(f[1]!))
      .map(([name, ready, unacked, consumers]) => ({
        name: name!,
        ready: Number(ready),
        unacked: Number(unacked),
        consumers: Number(consumers),
      }))
      .sort((a, b) => b.ready + b.unacked - (a.ready + a.unacked));
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => this.child?.kill('SIGKILL'));
  }
}

/** A temporary directory for one run's private infrastructure. */
export function chaosRoot(): { dir: string; remove(): void; keepLogs(to: string): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tes-chaos-'));
  return {
    dir,
    remove: () => rmSync(dir, { recursive: true, force: true }),
    /** Copies the servers' own logs (not their data) to `to`, for a run that failed. */
    keepLogs: (to) => {
      for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
        if (!entry.endsWith('.log')) continue;
        mkdirSync(path.dirname(path.join(to, entry)), { recursive: true });
        copyFileSync(path.join(dir, entry), path.join(to, entry));
      }
    },
  };
}
