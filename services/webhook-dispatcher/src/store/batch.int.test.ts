import net from 'node:net';
import mongoose from 'mongoose';
import { MONGO_URL, uniqueName } from '@tes/testing';
import { dropDatabase } from '../testing/fixtures.js';
import { insertEach } from './batch.js';

/**
 * A TCP proxy to the MongoDB-wire server that a test can make swallow the next request and drop
 * the connection: the write may or may not have happened, and the client cannot know.
 */
async function startProxy(target: URL): Promise<{ url: string; dropNextRequests(): void; close(): Promise<void> }> {
  let dropping = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 27017), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (dropping) {
        client.destroy();
        upstream.destroy();
      } else upstream.write(chunk);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    for (const s of [client, upstream]) {
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `mongodb://127.0.0.1:${port}/?serverSelectionTimeoutMS=2000`,
    dropNextRequests: () => {
      dropping = true;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('insertEach (real database, through a proxy that can cut the connection)', () => {
  const db = uniqueName('wd_batch');
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let conn: mongoose.Connection;

  beforeAll(async () => {
    proxy = await startProxy(new URL(MONGO_URL));
    conn = await mongoose.createConnection(proxy.url, { dbName: db }).asPromise();
  });

  afterAll(async () => {
    await conn?.close(true).catch(() => undefined);
    await proxy?.close();
    await dropDatabase(db);
  });

  it('tells inserted from duplicate documents', async () => {
    const col = conn.collection('items');
    expect(await insertEach(col, [{ _id: 'a' }, { _id: 'b' }] as never[])).toEqual(['inserted', 'inserted']);
    expect(await insertEach(col, [{ _id: 'b' }, { _id: 'c' }] as never[])).toEqual(['duplicate', 'inserted']);
  });

  it('throws when the connection is lost during the write, instead of calling the documents inserted', async () => {
    const col = conn.collection('items');
    proxy.dropNextRequests();
    await expect(insertEach(col, [{ _id: 'lost-1' }, { _id: 'lost-2' }] as never[])).rejects.toThrow();
  });
});
