import type { Connection } from 'mongoose';
import { MONGO_URL, memoryLogger, uniqueName } from '@tes/testing';
import { connectMongo } from './index.js';
import { slowCommandMsFromEnv } from './slow-commands.js';

/** DB_SLOW_COMMAND_MS against the real MongoDB-wire server (FerretDB here). */
describe('slow database command log (real database)', () => {
  const saved = process.env['DB_SLOW_COMMAND_MS'];
  const opened: Connection[] = [];
  const MARKER = 'do-not-log-me-7f3a';

  async function open(env: string | undefined) {
    if (env === undefined) delete process.env['DB_SLOW_COMMAND_MS'];
    else process.env['DB_SLOW_COMMAND_MS'] = env;
    const { logger, lines } = memoryLogger('store');
    const conn = await connectMongo({ url: MONGO_URL, dbName: uniqueName('store_slow'), logger });
    opened.push(conn);
    const slow = () =>
      lines()
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l['message'] === 'slow database command');
    return { conn, lines, slow };
  }

  afterEach(() => {
    if (saved === undefined) delete process.env['DB_SLOW_COMMAND_MS'];
    else process.env['DB_SLOW_COMMAND_MS'] = saved;
  });

  afterAll(async () => {
    for (const conn of opened) {
      await conn.dropDatabase().catch(() => undefined);
      await conn.close();
    }
  });

  it('logs every command at 0 ms: name, collection, duration and pool wait, never the documents', async () => {
    const { conn, lines, slow } = await open('0');
    await conn.collection('things').insertOne({ _id: 'a', note: MARKER } as never);
    await conn.collection('things').findOne({ note: MARKER });
    await conn.collection('things').updateOne({ _id: 'a' } as never, { $set: { note: `${MARKER}-2` } });

    const logged = slow();
    expect(logged.map((l) => `${String(l['command'])} ${String(l['collection'])}`)).toEqual(
      expect.arrayContaining(['insert things', 'find things', 'update things']),
    );
    for (const l of logged) {
      expect(l['level']).toBe('warn');
      expect(typeof l['duration_ms']).toBe('number');
      expect(Number.isNaN(Date.parse(String(l['started_at'])))).toBe(false);
    }
    // The first command on a freshly checked-out connection carries that check-out's wait.
    expect(logged.some((l) => typeof l['pool_wait_ms'] === 'number')).toBe(true);
    expect(lines().join('\n')).not.toContain(MARKER);
  });

  it('at 1 ms still logs the commands that take that long (creating a collection on FerretDB does)', async () => {
    const { conn, slow } = await open('1');
    await conn.collection('things').insertOne({ _id: 'b' } as never);
    expect(slow().some((l) => l['command'] === 'insert' && Number(l['duration_ms']) >= 1)).toBe(true);
  });

  it('shows the wait for a pool connection apart when more operations run than the pool has connections', async () => {
    const { conn, slow } = await open('0');
    await conn.collection('things').insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: `p${i}` }) as never));
    // 60 at once on a pool of 20: 40 of them wait for a connection another one gives back.
    await Promise.all(Array.from({ length: 60 }, () => conn.collection('things').find({}).toArray()));
    const waits = slow()
      .filter((l) => l['command'] === 'find')
      .map((l) => Number(l['pool_wait_ms'] ?? 0));
    expect(Math.max(...waits)).toBeGreaterThan(0);
  });

  it('logs nothing when DB_SLOW_COMMAND_MS is unset, nor under a threshold no command reaches', async () => {
    for (const env of [undefined, '', '600000']) {
      const { conn, slow } = await open(env);
      await conn.collection('things').insertOne({ _id: 'c' } as never);
      await conn.collection('things').findOne({ _id: 'c' } as never);
      expect(slow()).toEqual([]);
    }
  });

  it('refuses a value that is not a whole number of milliseconds, naming the setting', async () => {
    for (const bad of ['-5', '1.5', 'fast', '10ms']) {
      expect(() => slowCommandMsFromEnv({ DB_SLOW_COMMAND_MS: bad })).toThrow(/DB_SLOW_COMMAND_MS/);
    }
    process.env['DB_SLOW_COMMAND_MS'] = 'soon';
    const { logger } = memoryLogger('store');
    await expect(connectMongo({ url: MONGO_URL, dbName: uniqueName('store_slow'), logger })).rejects.toThrow(/DB_SLOW_COMMAND_MS/);
  });
});
