import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose, { type Connection } from 'mongoose';
import { OwnMongo, memoryLogger } from '@tes/testing';
import { DEFAULT_MAX_POOL_SIZE, connectMongo, ensureIndexes } from './index.js';

/**
 * FerretDB v1's deadlock (issue 33), on a FerretDB of the test's own with a small PostgreSQL pool
 * so it shows in seconds. An update holds one pool connection (its query) while
 * it waits for a second (its write), and waits for the metadata registry's read lock in between;
 * a collection or index creation holds the registry's write lock while it waits for a pool
 * connection. When the commands in flight hold every connection of the pool, nothing moves again,
 * ever. The fix: each service's pool (maxPoolSize) is sized so that all the clients of the server
 * together keep fewer commands in flight than FerretDB has connections, and the collections are
 * created at boot, not by the first write.
 */
/** Services sharing the server, each updating its own collection. */
const SERVICES = 2;
/**
 * FerretDB's PostgreSQL pool: more connections than the services and one booting beside them keep
 * commands in flight with the shipped pool size (3 x 6 = 18), the rule scripts/infra.sh applies to
 * the five services and its FerretDB; fewer than 2 services of the former pool size (2 x 20).
 */
const POOL = 19;
/** Updates each service has in flight (more than its pool: the rest queue in the driver). */
const WORKERS = 15;
const LOAD_MS = 4000;
/** Past the load: how long the commands in flight may take to finish before the server counts as hung. */
const GRACE_MS = 12_000;

const unavailable = OwnMongo.unavailable('ferretdb');
const describeFerret = unavailable ? describe.skip : describe;
if (unavailable) console.warn(`FerretDB deadlock test skipped: ${unavailable}`);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
const docSchema = new mongoose.Schema({ _id: String, n: Number, k: { type: Number, index: true } });

describeFerret(`FerretDB v1 pool deadlock (a server of its own, pool of ${POOL})`, () => {
  let root: string;
  let server: OwnMongo;
  let run = 0;

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'tes-deadlock-'));
    server = new OwnMongo(root, { kind: 'ferretdb', name: 'deadlock', poolMaxConns: POOL });
    await server.start();
  }, 90_000);

  afterAll(async () => {
    await server?.destroy();
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  /**
   * SERVICES connections (maxPoolSize each, by default connectMongo's) update their own collection from WORKERS loops for
   * LOAD_MS while collections are created: by the first write into each (implicit) or by a
   * service booting under that load (its ensureIndexes). 'hung' when the updates have not
   * finished GRACE_MS after the load and the server answers no ping within 3 s.
   */
  async function load(o: {
    maxPoolSize?: number;
    schemaAtBoot: boolean;
  }): Promise<{ outcome: 'completed' | 'slow' | 'hung'; updates: number; goroutines: string }> {
    run += 1;
    const { logger } = memoryLogger('deadlock');
    const open: Connection[] = [];
    const connect = async (db: string) => {
      const conn = await connectMongo({ url: server.url, dbName: `r${run}_${db}`, logger, maxPoolSize: o.maxPoolSize });
      open.push(conn);
      conn.model('Doc', docSchema, 'docs');
      if (o.schemaAtBoot) await ensureIndexes(conn);
      return conn;
    };
    let updates = 0;
    const body = async () => {
      const services = await Promise.all(Array.from({ length: SERVICES }, (_, i) => connect(`svc${i}`)));
      for (const conn of services) await conn.collection('docs').insertMany([0, 1, 2, 3].map((i) => ({ _id: `d${i}`, n: 0 }) as never));
      const stopAt = Date.now() + LOAD_MS;
      const workers = services.flatMap((conn) =>
        Array.from({ length: WORKERS }, async (_, w) => {
          while (Date.now() < stopAt) {
            await conn.collection('docs').updateOne({ _id: `d${w % 4}` } as never, { $inc: { n: 1 }, $set: { k: w } });
            updates += 1;
          }
        }),
      );
      const creations = (async () => {
        for (let k = 0; Date.now() < stopAt; k++) {
          await sleep(300);
          // The first write into a collection creates it (before the fix), or a service boots (after).
          if (o.schemaAtBoot) await connect(`late${k}`);
          else await services[k % SERVICES]!.collection(`new${k}`).updateOne({ _id: 'x' } as never, { $set: { k } }, { upsert: true });
        }
      })();
      const settled = await Promise.allSettled([...workers, creations]);
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return 'completed' as const;
    };
    const done = body();
    done.catch(() => undefined);
    const first = await Promise.race([done, sleep(LOAD_MS + GRACE_MS).then(() => 'late' as const)]);
    const outcome =
      first === 'completed'
        ? first
        : (await Promise.race([server.ping(), sleep(3000).then(() => false)]))
          ? ('slow' as const)
          : ('hung' as const);
    // What the server's goroutines wait for (its debug handler still answers); then it is killed and
    // started again: the commands in flight fail, the connections can close.
    const goroutines = outcome === 'hung' ? await (await fetch(`${server.debugUrl}/debug/pprof/goroutine?debug=2`)).text() : '';
    if (outcome === 'hung') await server.restart(0);
    await done.catch(() => undefined);
    await Promise.all(open.map((c) => c.close(true).catch(() => undefined)));
    return { outcome, updates, goroutines };
  }

  it('hangs the server with the pool size the services had (20 each) and collections created by their first write', async () => {
    const r = await load({ maxPoolSize: 20, schemaAtBoot: false });
    expect(r.outcome).toBe('hung');
    // Its commands wait for a PostgreSQL connection that none of them will give back.
    expect(r.goroutines).toContain('pgxpool.(*Pool).Acquire');
  }, 90_000);

  it('keeps answering with the shipped pool size (fewer commands in flight than its pool) and collections created at boot', async () => {
    expect((SERVICES + 1) * DEFAULT_MAX_POOL_SIZE).toBeLessThan(POOL);
    const r = await load({ schemaAtBoot: true });
    expect(r.outcome).toBe('completed');
    expect(r.updates).toBeGreaterThan(SERVICES * WORKERS);
  }, 90_000);
});
