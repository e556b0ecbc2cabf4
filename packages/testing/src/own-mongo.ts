/**
 * A MongoDB-wire server that belongs to one test run or one benchmark alone, so that what it
 * does (stop, kill, restart; or measure) neither disturbs nor is disturbed by the machine's shared
 * server (127.0.0.1:27017) that every other suite uses. FerretDB v1 holds one global lock during
 * any client's schema change, which stalls every other client of the same server
 * (docs/performance.md, "The mechanism, isolated"). Used by the chaos suite (test/chaos) and the
 * benchmarks (bench/lib/own-database.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { REPO_ROOT, freePort } from './index.js';
import { logTail, pollUntil } from './server-process.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

const CACHE = process.env['TES_CACHE_DIR'] ?? path.join(os.homedir(), '.cache', 'tes');
const FERRETDB = path.join(CACHE, 'ferretdb', 'ferretdb');
const PG = { host: '127.0.0.1', port: '5432', user: 'postgres' };

function which(cmd: string): string | null {
  const res = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : null;
}

export type OwnMongoKind = 'mongod' | 'ferretdb';

export interface OwnMongoOptions {
  /** The server: by default `mongod` when one is on the PATH (as scripts/infra.sh prefers), else FerretDB. */
  kind?: OwnMongoKind;
  /** The start of its PostgreSQL database's name (FerretDB), followed by the pid and a random suffix. */
  name?: string;
  /** FerretDB's PostgreSQL pool (`pool_max_conns`); by default the shared server's (scripts/infra.sh). */
  poolMaxConns?: number;
}

/** FerretDB's PostgreSQL pool when not given: the shared server's (scripts/infra.sh explains the number). */
const POOL_MAX_CONNS = 40;

/**
 * A MongoDB-wire server of its own on a free port: `mongod` with its own data directory, or
 * FerretDB (the binary scripts/infra.sh builds, with the shared server's flags) on a PostgreSQL
 * database of its own, its debug metrics on a port of its own. Everything lives under
 * `<root>/mongo`; `destroy()` stops the server and drops the PostgreSQL database. `kill()` is kill -9.
 */
export class OwnMongo {
  readonly dir: string;
  readonly kind: OwnMongoKind;
  readonly pgDatabase: string;
  port = 0;
  /** FerretDB's debug address (`/debug/metrics`); 0 for mongod. */
  debugPort = 0;
  readonly poolMaxConns: number;
  private child: ChildProcess | undefined;
  private startCount = 0;
  private lastLog = '';

  /** How the server process ended if it ended without being told to (kill/restart/destroy), else null. */
  exitedByItself(): string | null {
    const child = this.child;
    if (!child || (child.exitCode === null && child.signalCode === null)) return null;
    return `exit code ${child.exitCode}, signal ${child.signalCode}; log:\n${logTail(this.lastLog)}`;
  }

  /** Why this machine cannot run such a server (of `kind`, or of the default kind), or null when it can. */
  static unavailable(kind?: OwnMongoKind): string | null {
    if ((kind ?? (which('mongod') ? 'mongod' : 'ferretdb')) === 'mongod') return which('mongod') ? null : 'no mongod on the PATH';
    if (!existsSync(FERRETDB)) return `no FerretDB binary at ${FERRETDB} (scripts/infra.sh up builds it)`;
    if (!which('createdb') || !which('dropdb') || !which('psql')) return 'PostgreSQL client tools (createdb, dropdb, psql) are missing';
    return null;
  }

  constructor(root: string, options: OwnMongoOptions = {}) {
    this.dir = path.join(root, 'mongo');
    mkdirSync(path.join(this.dir, 'state'), { recursive: true });
    mkdirSync(path.join(this.dir, 'data'), { recursive: true });
    this.kind = options.kind ?? (which('mongod') ? 'mongod' : 'ferretdb');
    this.pgDatabase = `${options.name ?? 'own'}_${process.pid}_${randomBytes(3).toString('hex')}`;
    this.poolMaxConns = options.poolMaxConns ?? POOL_MAX_CONNS;
  }

  get url(): string {
    return `mongodb://127.0.0.1:${this.port}`;
  }

  /** FerretDB's debug handler (`${debugUrl}/debug/metrics`: its command counters); undefined for mongod. */
  get debugUrl(): string | undefined {
    return this.debugPort ? `http://127.0.0.1:${this.debugPort}` : undefined;
  }

  /** Starts the server (the same ports and data on a restart) and waits until it answers a ping. */
  async start(): Promise<void> {
    if (!this.port) {
      this.port = await freePort();
      if (this.kind === 'ferretdb') {
        this.debugPort = await freePort();
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
              `--postgresql-url=postgres://${PG.user}@${PG.host}:${PG.port}/${this.pgDatabase}?pool_max_conns=${this.poolMaxConns}&pool_max_conn_idle_time=1m`,
              `--listen-addr=127.0.0.1:${this.port}`,
              `--state-dir=${path.join(this.dir, 'state')}`,
              '--telemetry=disable',
              `--debug-addr=127.0.0.1:${this.debugPort}`,
              '--log-level=warn',
            ],
          ];
    this.child = spawn(cmd, args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const child = this.child;
    await pollUntil(
      `${this.kind} on port ${this.port}`,
      60_000,
      async () => {
        if (child.exitCode !== null) throw new Error(`${this.kind} exited with ${child.exitCode}:\n${logTail(log)}`);
        return this.ping();
      },
      () => logTail(log),
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

  /** Stops the server (SIGTERM, SIGKILL after 10 s) and drops its PostgreSQL database. */
  async destroy(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    this.child = undefined;
    this.dropDatabase();
  }

  /**
   * `destroy()` for a process that is exiting (a `process.on('exit')` hook cannot wait): kill -9
   * of the server, then its PostgreSQL database dropped (dropdb --force ends what is still connected).
   */
  destroyNow(): void {
    this.child?.kill('SIGKILL');
    this.child = undefined;
    this.dropDatabase();
  }

  private dropDatabase(): void {
    if (this.kind === 'ferretdb' && this.port) {
      spawnSync('dropdb', ['-h', PG.host, '-p', PG.port, '-U', PG.user, '--if-exists', '--force', this.pgDatabase], {
        encoding: 'utf8',
        timeout: 60_000,
      });
    }
  }
}
