/**
 * Private infrastructure for the chaos suite: a RabbitMQ node and a MongoDB-wire server
 * (FerretDB on its own PostgreSQL database, or a mongod when one is on the PATH) that
 * belong to this test run alone, so the suite can stop, kill and restart them without
 * touching the machine's shared broker (127.0.0.1:5672) and database (127.0.0.1:27017)
 * that every other test uses.
 *
 * Everything lives in one temporary directory; `destroy()` stops the processes, drops the
 * PostgreSQL database and removes the directory.
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
import { MongoClient } from 'mongodb';
import { REPO_ROOT, freePort } from '@tes/testing';

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

async function until(what: string, timeoutMs: number, fn: () => Promise<boolean> | boolean, log?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${log ? `\n${log()}` : ''}`);
}

function tail(file: string, n = 40): string {
  const res = spawnSync('tail', ['-n', String(n), file], { encoding: 'utf8' });
  return res.stdout ?? '';
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
    return `exit code ${child.exitCode}, signal ${child.signalCode}; log:\n${tail(this.lastLog)}`;
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
    await until(
      `RabbitMQ node ${this.node} on port ${this.port}`,
      // Erlang boots slowly on a loaded 2-core machine (seen: over 60 s while other jobs ran).
      120_000,
      async () => {
        if (child.exitCode !== null) throw new Error(`rabbitmq-server exited with ${child.exitCode}:\n${tail(log)}`);
        return tcpOpen(this.port);
      },
      () => tail(log),
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
    await until(`port ${this.port} to close`, 30_000, async () => !(await tcpOpen(this.port)));
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

const CACHE = process.env['TES_CACHE_DIR'] ?? path.join(os.homedir(), '.cache', 'tes');
const FERRETDB = path.join(CACHE, 'ferretdb', 'ferretdb');
const PG = { host: '127.0.0.1', port: '5432', user: 'postgres' };

function which(cmd: string): string | null {
  const res = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : null;
}

/**
 * A MongoDB-wire server of its own on a free port: `mongod` with its own data directory
 * when one is on the PATH (as scripts/infra.sh prefers), else FerretDB (the binary
 * scripts/infra.sh builds) on a PostgreSQL database of its own. `kill()` is kill -9.
 */
export class OwnMongo {
  readonly dir: string;
  readonly kind: 'mongod' | 'ferretdb';
  readonly pgDatabase: string;
  port = 0;
  private child: ChildProcess | undefined;
  private startCount = 0;
  private lastLog = '';

  /** How the server process ended if it ended without being told to (kill/restart/destroy), else null. */
  exitedByItself(): string | null {
    const child = this.child;
    if (!child || (child.exitCode === null && child.signalCode === null)) return null;
    return `exit code ${child.exitCode}, signal ${child.signalCode}; log:\n${tail(this.lastLog)}`;
  }

  static unavailable(): string | null {
    if (which('mongod')) return null;
    if (!existsSync(FERRETDB)) return `no mongod on the PATH and no FerretDB binary at ${FERRETDB} (scripts/infra.sh up builds it)`;
    if (!which('createdb') || !which('psql')) return 'PostgreSQL client tools (createdb, psql) are missing';
    return null;
  }

  constructor(root: string) {
    this.dir = path.join(root, 'mongo');
    mkdirSync(path.join(this.dir, 'state'), { recursive: true });
    mkdirSync(path.join(this.dir, 'data'), { recursive: true });
    this.kind = which('mongod') ? 'mongod' : 'ferretdb';
    this.pgDatabase = `chaos_${process.pid}_${randomBytes(3).toString('hex')}`;
  }

  get url(): string {
    return `mongodb://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (!this.port) {
      this.port = await freePort();
      if (this.kind === 'ferretdb') {
        const res = spawnSync('createdb', ['-h', PG.host, '-p', PG.port, '-U', PG.user, this.pgDatabase], { encoding: 'utf8' });
        if (res.status !== 0) throw new Error(`createdb ${this.pgDatabase} failed: ${res.stderr}`);
        // The lookup indexes FerretDB v1 can use, as scripts/infra.sh gives the shared server.
        const sql = path.join(REPO_ROOT, 'scripts', 'ferretdb-lookup-indexes.sql');
        const idx = spawnSync(
          'psql',
          ['-h', PG.host, '-p', PG.port, '-U', PG.user, '-d', this.pgDatabase, '-q', '-v', 'ON_ERROR_STOP=1', '-f', sql],
          {
            encoding: 'utf8',
          },
        );
        if (idx.status !== 0) throw new Error(`psql -f ${sql} failed: ${idx.stderr}`);
      }
    }
    const log = path.join(this.dir, `server-${++this.startCount}.log`);
    this.lastLog = log;
    const fd = openSync(log, 'a');
    const [cmd, args]: [string, string[]] =
      this.kind === 'mongod'
        ? ['mongod', ['--dbpath', path.join(this.dir, 'data'), '--bind_ip', '127.0.0.1', '--port', String(this.port)]]
        : [
            FERRETDB,
            [
              '--handler=postgresql',
              // A pool of its own beside the shared FerretDB's (scripts/infra.sh explains the numbers).
              `--postgresql-url=postgres://${PG.user}@${PG.host}:${PG.port}/${this.pgDatabase}?pool_max_conns=40&pool_max_conn_idle_time=1m`,
              `--listen-addr=127.0.0.1:${this.port}`,
              `--state-dir=${path.join(this.dir, 'state')}`,
              '--telemetry=disable',
              '--debug-addr=127.0.0.1:0',
              '--log-level=warn',
            ],
          ];
    this.child = spawn(cmd, args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const child = this.child;
    await until(
      `${this.kind} on port ${this.port}`,
      60_000,
      async () => {
        if (child.exitCode !== null) throw new Error(`${this.kind} exited with ${child.exitCode}:\n${tail(log)}`);
        return this.ping();
      },
      () => tail(log),
    );
  }

  async ping(): Promise<boolean> {
    const client = new MongoClient(this.url, { serverSelectionTimeoutMS: 1000, connectTimeoutMS: 1000 });
    try {
      await client.connect();
      const r = await client.db('admin').command({ ping: 1 });
      return r['ok'] === 1;
    } catch {
      return false;
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  /** kill -9 of the server process: connections drop mid-operation. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  async restart(downMs: number): Promise<{ downMs: number }> {
    const t0 = Date.now();
    await this.kill();
    await sleep(downMs);
    await this.start();
    return { downMs: Date.now() - t0 };
  }

  async destroy(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    if (this.kind === 'ferretdb' && this.port) {
      spawnSync('dropdb', ['-h', PG.host, '-p', PG.port, '-U', PG.user, '--if-exists', '--force', this.pgDatabase], { encoding: 'utf8' });
    }
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
