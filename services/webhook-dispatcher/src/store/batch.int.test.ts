import mongoose from 'mongoose';
import { MONGO_URL, startTcpProxy, uniqueName, type TcpProxy } from '@tes/testing';
import { dropDatabase } from '../../test/fixtures.js';
import { insertEach } from './batch.js';

describe('insertEach (real database, through a proxy that can cut the connection)', () => {
  const db = uniqueName('wd_batch');
  let proxy: TcpProxy;
  let conn: mongoose.Connection;

  beforeAll(async () => {
    const target = new URL(MONGO_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 27017));
    conn = await mongoose.createConnection(`mongodb://127.0.0.1:${proxy.port}/?serverSelectionTimeoutMS=2000`, { dbName: db }).asPromise();
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
    // The request leaves the client but never reaches the server; then the connection drops.
    proxy.blackhole();
    const write = insertEach(col, [{ _id: 'lost-1' }, { _id: 'lost-2' }] as never[]);
    await new Promise((r) => setTimeout(r, 200));
    await proxy.cut();
    await expect(write).rejects.toThrow();
  });
});
