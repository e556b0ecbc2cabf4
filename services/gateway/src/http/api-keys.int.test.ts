import http from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose, { type Connection } from 'mongoose';
import { Broker } from '@tes/messaging';
import { ensureIndexes } from '@tes/store';
import { AMQP_URL, MONGO_URL, memoryLogger, request, uniqueName, waitFor } from '@tes/testing';
import { hashApiKey } from '../domain/api-key.js';
import { CredentialsCache } from '../domain/credentials-cache.js';
import { LAST_USED_INTERVAL_MS, LastUsedThrottle } from '../domain/last-used.js';
import { createKey, listKeys, revokeKey, rollKey } from '../dashboard/keys.js';
import { followCredentialChanges } from '../messaging/credential-changes.js';
import { AccountRepository } from '../store/account.repository.js';
import { IdempotencyRepository } from '../store/idempotency.repository.js';
import { RateLimitRepository } from '../store/rate-limit.repository.js';
import { TaskViewRepository } from '../store/task-view.repository.js';
import { createApp } from './app.js';

/**
 * API keys through the gateway's app, wired as composition.ts wires it (the repositories on the
 * real database, the credentials cache following its real broker queue, the last-used throttle),
 * over real HTTP: a rolled key works until its expiry and is refused (401) from then on; last use
 * costs at most one database write per key per minute, counted with the driver's command monitoring.
 */
describe('API keys: rolling with an expiry, last used (real gateway app, database and broker)', () => {
  const { logger, lines } = memoryLogger('gateway');
  const dbName = uniqueName('gw_keys');
  let conn: Connection;
  let broker: Broker;
  let repo: AccountRepository;
  let server: http.Server;
  let base = '';
  /** The throttle's clock: moved by hand to stand for minutes passing. */
  let clockMs = Date.now();
  /** Database commands that write `api_key_usage`, as the driver sent them. */
  let usageWrites = 0;
  const secrets: string[] = [];

  beforeAll(async () => {
    conn = mongoose.createConnection(MONGO_URL, { dbName, monitorCommands: true, autoIndex: false, autoCreate: false });
    await conn.asPromise();
    conn.getClient().on('commandStarted', (e: { commandName: string; command: Record<string, unknown> }) => {
      if (e.commandName === 'update' && e.command['update'] === 'api_key_usage') usageWrites++;
    });
    repo = new AccountRepository(conn);
    const views = new TaskViewRepository(conn);
    const rateLimits = new RateLimitRepository(conn);
    const idempotencyKeys = new IdempotencyRepository(conn);
    await ensureIndexes(conn);
    broker = new Broker({ url: AMQP_URL, source: 'gateway', logger, namespace: uniqueName('gwkeys') });
    await broker.connect();
    const credentials = new CredentialsCache(repo, 10_000);
    repo.onChange(async (accountId) => credentials.invalidate(accountId));
    await followCredentialChanges(broker, credentials, 'test-replica');
    const lastUsed = new LastUsedThrottle(
      (keyId, at) => repo.usage.touch(keyId, at, LAST_USED_INTERVAL_MS),
      (err) => logger.error('last-used write failed', { error: (err as Error).message }),
      LAST_USED_INTERVAL_MS,
      () => clockMs,
    );
    const app = createApp({
      broker,
      accounts: repo,
      credentials,
      lastUsed,
      views,
      rateLimits,
      idempotencyKeys,
      logger,
      requestTimeoutMs: 2000,
      bodyLimitBytes: 262_144,
      idempotencyLeaseMs: 30_000,
    });
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await broker?.close(2000);
    await conn?.dropDatabase();
    await conn?.close();
  });

  async function newAccount(): Promise<string> {
    const id = uniqueName('acct');
    // A high request limit: these tests send many requests within one minute.
    await repo.accounts.create({
      _id: id,
      name: 'keys',
      plan: 'prototyping',
      status: 'active',
      limits: { requests_per_minute: 10_000 },
      created_at: new Date(),
    });
    return id;
  }

  async function newKey(accountId: string, name?: string) {
    const k = await createKey(repo, accountId, 'test', name);
    secrets.push(k.secret);
    return k;
  }

  const get = (key: string) => request('GET', `${base}/tasks`, { headers: { authorization: `Bearer ${key}` } });
  const statusOf = async (key: string) => (await get(key)).status;

  it('keeps a key rolled with an expiry working beside its successor, and refuses it (401) from the first request after', async () => {
    const accountId = await newAccount();
    const old = await newKey(accountId, 'billing worker');
    expect(await statusOf(old.secret)).toBe(200); // now in the replica's credentials cache
    // Rolled "1 hour" ago less 3 s: its hour ends 3 s from now.
    const rolledAt = new Date(Date.now() - 3_600_000 + 3000);
    const rolled = await rollKey(repo, accountId, old.key.id, '1h', rolledAt);
    expect(rolled).not.toBeNull();
    secrets.push(rolled!.secret);
    const expiresAt = rolledAt.getTime() + 3_600_000;
    expect(rolled!.old).toMatchObject({ status: 'expiring', expires_at: new Date(expiresAt) });
    expect(rolled!.key).toMatchObject({ status: 'active', name: 'billing worker', environment: 'test' });
    expect((await repo.keyById(old.key.id))?.expires_at).toEqual(new Date(expiresAt));

    // Before the expiry: both keys work.
    expect(await statusOf(old.secret)).toBe(200);
    expect(await statusOf(rolled!.secret)).toBe(200);
    expect(Date.now()).toBeLessThan(expiresAt);

    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 50));
    const refused = await get(old.secret);
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual({ error: { code: 'invalid_api_key', message: 'The API key is unknown, revoked or expired' } });
    expect(await statusOf(rolled!.secret)).toBe(200);
    const listed = await listKeys(repo, accountId);
    expect(listed.find((k) => k.id === old.key.id)?.status).toBe('expired');
    expect(listed[0]?.id).toBe(rolled!.key.id);
  });

  it('sets the expiry the roll asks for (now + 1 h), never extends an earlier one, and still revokes at once', async () => {
    const accountId = await newAccount();
    const old = await newKey(accountId);
    const t0 = Date.now();
    const first = await rollKey(repo, accountId, old.key.id, '1h');
    const t1 = Date.now();
    const at = first!.old.expires_at!.getTime();
    expect(at).toBeGreaterThanOrEqual(t0 + 3_600_000);
    expect(at).toBeLessThanOrEqual(t1 + 3_600_000);
    // Rolled again for 7 days: the earlier expiry stays.
    const second = await rollKey(repo, accountId, old.key.id, '7d');
    expect(second!.old.expires_at).toEqual(new Date(at));
    expect(await statusOf(old.secret)).toBe(200);
    // Revocation of an expiring key is immediate.
    expect(await revokeKey(repo, accountId, old.key.id)).toMatchObject({ status: 'revoked' });
    expect((await get(old.secret)).json).toMatchObject({ error: { code: 'invalid_api_key' } });
    // And a revoked key cannot be rolled.
    expect(await rollKey(repo, accountId, old.key.id, '1h')).toBeNull();
  });

  it('refuses a key rolled with "now" on the next request', async () => {
    const accountId = await newAccount();
    const old = await newKey(accountId);
    expect(await statusOf(old.secret)).toBe(200);
    const rolled = await rollKey(repo, accountId, old.key.id, 'now');
    secrets.push(rolled!.secret);
    expect(rolled!.old.status).toBe('revoked');
    expect(await statusOf(old.secret)).toBe(401);
    expect(await statusOf(rolled!.secret)).toBe(200);
  });

  it('records last use with at most one database write per key per minute, however many requests', async () => {
    const accountId = await newAccount();
    const a = await newKey(accountId, 'a');
    const b = await newKey(accountId, 'b');
    const usedAt = async (id: string) => (await listKeys(repo, accountId)).find((k) => k.id === id)?.last_used_at ?? null;
    expect(await usedAt(a.key.id)).toBeNull();
    const burst = async (key: string, n: number) => {
      const statuses = await Promise.all(Array.from({ length: n }, () => statusOf(key)));
      expect(statuses).toEqual(Array(n).fill(200));
    };
    /** Waits for `n` more writes, then a while longer to see that no other one follows. */
    const writesAfter = async (before: number, n: number) => {
      if (n > 0) await waitFor(() => usageWrites >= before + n, { what: `${n} last-used write(s)`, timeoutMs: 10_000 });
      await new Promise((r) => setTimeout(r, 500));
      return usageWrites - before;
    };

    const start = clockMs;
    let before = usageWrites;
    await burst(a.secret, 30);
    await burst(a.secret, 10);
    expect(await writesAfter(before, 1)).toBe(1);
    expect(await usedAt(a.key.id)).toEqual(new Date(start));

    // 59 s later: still within the minute, no write.
    clockMs = start + 59_000;
    before = usageWrites;
    await burst(a.secret, 10);
    expect(await writesAfter(before, 0)).toBe(0);

    // 61 s later: one write, the new time; the other key has its own minute.
    clockMs = start + 61_000;
    before = usageWrites;
    await burst(a.secret, 10);
    await burst(b.secret, 10);
    expect(await writesAfter(before, 2)).toBe(2);
    expect(await usedAt(a.key.id)).toEqual(new Date(start + 61_000));
    expect(await usedAt(b.key.id)).toEqual(new Date(start + 61_000));

    // Another replica (its own throttle) writing within the minute changes nothing: the write is conditional.
    await repo.usage.touch(a.key.id, new Date(start + 90_000), LAST_USED_INTERVAL_MS);
    expect(await usedAt(a.key.id)).toEqual(new Date(start + 61_000));
    await repo.usage.touch(a.key.id, new Date(start + 125_000), LAST_USED_INTERVAL_MS);
    expect(await usedAt(a.key.id)).toEqual(new Date(start + 125_000));
  });

  it('never logs a key or its hash, and no last-used write failed', async () => {
    const text = lines().join('\n');
    expect(secrets.length).toBeGreaterThan(3);
    expect(text).toContain('/v1/tasks'); // the request lines are there
    for (const s of secrets) expect([text.includes(s), text.includes(hashApiKey(s))]).toEqual([false, false]);
    expect(text).not.toContain('last-used write failed');
  });
});
