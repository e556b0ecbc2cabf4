import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { OwnMongo, REPO_ROOT, freePort } from '@tes/testing';

/**
 * scripts/infra.sh's database watchdog on a FerretDB that infra.sh starts for this test alone (its
 * own cache dir, port, debug port and PostgreSQL database; a pool of 15 so it hangs at once):
 * `check` answers within its deadline while the server is healthy and fails once it is hung by
 * FerretDB v1's pool deadlock (more updates in flight than its pool); `watchdog` then prints the
 * goroutine dump and restarts it, and the database answers again.
 */
const unavailable = OwnMongo.unavailable('ferretdb');
const describeFerret = unavailable ? describe.skip : describe;
if (unavailable) console.warn(`database watchdog test skipped: ${unavailable}`);

const FERRETDB = path.join(process.env['TES_CACHE_DIR'] ?? path.join(os.homedir(), '.cache', 'tes'), 'ferretdb', 'ferretdb');
const POOL = 15;

describeFerret('database watchdog (scripts/infra.sh check, watchdog)', () => {
  let cache: string;
  let env: NodeJS.ProcessEnv;
  let url: string;
  const pgDatabase = `watchdog_${process.pid}_${randomBytes(3).toString('hex')}`;
  const clients: MongoClient[] = [];

  function infra(cmd: string, extra: NodeJS.ProcessEnv = {}): { code: number | null; out: string } {
    const r = spawnSync('bash', ['scripts/infra.sh', cmd], {
      cwd: REPO_ROOT,
      env: { ...env, ...extra },
      encoding: 'utf8',
      timeout: 150_000,
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  }

  beforeAll(async () => {
    cache = mkdtempSync(path.join(os.tmpdir(), 'tes-watchdog-'));
    mkdirSync(path.join(cache, 'ferretdb'));
    symlinkSync(FERRETDB, path.join(cache, 'ferretdb', 'ferretdb'));
    url = `mongodb://127.0.0.1:${await freePort()}`;
    env = {
      ...process.env,
      TES_CACHE_DIR: cache,
      MONGO_URL: url,
      FERRETDB_PG_DATABASE: pgDatabase,
      FERRETDB_DEBUG_ADDR: `127.0.0.1:${await freePort()}`,
      FERRETDB_POOL_MAX_CONNS: String(POOL),
      // The pool arithmetic infra.sh checks: 5 services x 1 + 9 < 15.
      MONGO_MAX_POOL_SIZE: '1',
    };
    const up = infra('up');
    expect(up.out).toContain('ferretdb: ready');
    expect(up.code).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close(true).catch(() => undefined)));
    if (env) infra('down');
    spawnSync('dropdb', ['-h', '127.0.0.1', '-p', '5432', '-U', 'postgres', '--if-exists', '--force', pgDatabase], { timeout: 60_000 });
    if (cache) rmSync(cache, { recursive: true, force: true });
  }, 120_000);

  it('answers a ping and a write within the deadline while the database is healthy', () => {
    const r = infra('check');
    expect(r.out).toContain('answers a ping and a write');
    expect(r.code).toBe(0);
  });

  it('fails the check when FerretDB hangs, then dumps its goroutines and restarts it', async () => {
    // Three clients of 10 connections, 30 updates in flight against a pool of 15: each holds its
    // query's connection while it waits for a second one, and none comes back.
    for (let i = 0; i < 3; i++) clients.push(await MongoClient.connect(url, { maxPoolSize: 10 }));
    for (const [i, c] of clients.entries())
      await c
        .db(`hang${i}`)
        .collection('docs')
        .insertOne({ _id: 'd' } as never);
    for (const [i, c] of clients.entries())
      for (let w = 0; w < 10; w++)
        void c
          .db(`hang${i}`)
          .collection('docs')
          .updateOne({ _id: 'd' } as never, { $inc: { n: 1 } })
          .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 2000));

    const hung = infra('check', { TES_DB_CHECK_DEADLINE_S: '3' });
    expect(hung.out).toContain('no answer to a ping within 3s');
    expect(hung.code).toBe(1);

    const watch = infra('watchdog', { TES_DB_CHECK_DEADLINE_S: '2', TES_DB_WATCHDOG_INTERVAL_S: '1', TES_DB_WATCHDOG_FAILS: '2' });
    expect(watch.out).toContain('has not answered for 2 checks in a row');
    expect(watch.out).toContain('----- goroutine dump begin -----');
    expect(watch.out).toContain('pgxpool.(*Pool).Acquire');
    expect(watch.out).toContain('ferretdb: restarted after it stopped answering');
    expect(watch.code).toBe(3);

    const healthy = infra('check');
    expect(healthy.code).toBe(0);
  }, 180_000);
});
