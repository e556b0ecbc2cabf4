import mongoose from 'mongoose';
import { MONGO_URL, uniqueName } from '@tes/testing';
import { KeyRing } from '@tes/sealing';
import { createRepositories, type Repositories } from './repositories.js';
import { dropDatabase } from '../../test/fixtures.js';
import { ConfigCache } from './config-cache.js';
import { DEVELOPMENT_KEYS } from '../secret-keys.js';

/**
 * How long a cached endpoint is believed: 1 s while the replica is not told of changes, the
 * followed TTL while its webhook.config_changed queue stays attached, and never across a
 * re-attachment (what was announced meanwhile is lost). Real repositories on a real database;
 * the clock and the subscription are the test's.
 */
describe('ConfigCache', () => {
  const db = uniqueName('wd_cache');
  let conn: mongoose.Connection;
  let repos: Repositories;
  let reads = 0;
  let now = 0;
  let attachment: number | undefined;

  beforeAll(async () => {
    conn = await mongoose.createConnection(MONGO_URL, { dbName: db }).asPromise();
    repos = createRepositories(conn, KeyRing.parse(DEVELOPMENT_KEYS));
    const get = repos.endpoints.get.bind(repos.endpoints);
    repos.endpoints.get = (account, environment) => {
      reads++;
      return get(account, environment);
    };
    await repos.endpoints.set('acc_cache', 'test', 'https://hooks.example.com/a');
  });

  afterAll(async () => {
    await conn?.close();
    await dropDatabase(db);
  });

  function cache(): ConfigCache {
    reads = 0;
    now = 0;
    attachment = undefined;
    const c = new ConfigCache(repos, 1000, () => now);
    c.followChanges(() => attachment, 60_000);
    return c;
  }

  it('keeps an entry the short TTL while not told of changes', async () => {
    const c = cache();
    await c.endpoint('acc_cache', 'test');
    now = 500;
    await c.endpoint('acc_cache', 'test');
    expect(reads).toBe(1);
    now = 1001;
    await c.endpoint('acc_cache', 'test');
    expect(reads).toBe(2);
  });

  it('keeps an entry the followed TTL while the change queue stays attached', async () => {
    const c = cache();
    attachment = 7;
    await c.endpoint('acc_cache', 'test');
    now = 40_000;
    await c.endpoint('acc_cache', 'test');
    expect(reads).toBe(1);
    now = 60_001;
    await c.endpoint('acc_cache', 'test');
    expect(reads).toBe(2);
  });

  it('reads again once the queue was detached or attached anew, and after an announced change', async () => {
    const c = cache();
    attachment = 7;
    await c.endpoint('acc_cache', 'test');
    attachment = undefined; // the broker connection dropped
    now = 10;
    await c.endpoint('acc_cache', 'test');
    expect(reads).toBe(2);
    attachment = 8; // back, on a new queue: what was announced meanwhile is lost
    now = 20;
    await c.endpoint('acc_cache', 'test');
    expect(reads).toBe(3);
    now = 30;
    await c.endpoint('acc_cache', 'test');
    expect(reads).toBe(3);
    c.invalidate('acc_cache', 'test');
    expect(await c.endpoint('acc_cache', 'test')).toMatchObject({ url: 'https://hooks.example.com/a' });
    expect(reads).toBe(4);
  });
});
