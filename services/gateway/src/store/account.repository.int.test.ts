import type { Connection } from 'mongoose';
import { connectMongo, ensureIndexes } from '@tes/store';
import { MONGO_URL, deferred, memoryLogger, uniqueName } from '@tes/testing';
import { AccountRepository } from './account.repository.js';

/**
 * Changes that can refuse or limit a request tell the listeners (the gateways' credential caches
 * and announcements), after the write and before they are answered: the dashboard says "Key
 * revoked" only once the other replicas have been told.
 */
describe('account repository: changes and their listeners (real database)', () => {
  const { logger } = memoryLogger('gateway');
  const dbName = uniqueName('gw_accounts');
  let conn: Connection;
  let repo: AccountRepository;
  const told: { accountId: string; stored: unknown }[] = [];
  let release: () => void = () => undefined;
  // Resolved when the listener has been told and waits for `release` (a fixed delay is too short on a loaded machine).
  let listening = deferred();

  beforeAll(async () => {
    conn = await connectMongo({ url: MONGO_URL, dbName, logger });
    await ensureIndexes(conn);
    repo = new AccountRepository(conn);
    repo.onChange(async (accountId) => {
      // What is stored when the listener hears of the change: the write came first.
      const key = await repo.keys.collection.findOne({ _id: 'key_a' } as never);
      const account = await repo.account(accountId);
      told.push({ accountId, stored: { key: key?.status, account: account?.status, limits: account?.limits } });
      const released = new Promise<void>((r) => (release = r));
      listening.resolve();
      await released;
    });
    await repo.accounts.collection.insertOne({
      _id: 'acct_a',
      name: 'a',
      plan: 'prototyping',
      status: 'active',
      created_at: new Date(),
    } as never);
    await repo.keys.collection.insertOne({ _id: 'key_a', account_id: 'acct_a', environment: 'test', hash: 'h', status: 'active' } as never);
    await repo.keys.collection.insertOne({
      _id: 'key_b',
      account_id: 'acct_a',
      environment: 'live',
      hash: 'h2',
      status: 'active',
    } as never);
  });

  afterAll(async () => {
    await conn?.dropDatabase();
    await conn?.close();
  });

  async function settlesOnlyAfterListener(change: Promise<unknown>): Promise<unknown> {
    let done = false;
    void change.then(() => (done = true));
    await listening.promise;
    listening = deferred();
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false); // still waiting for the listener
    release();
    return change;
  }

  it('revokes a key, then waits for the listeners, who see it revoked', async () => {
    expect(await settlesOnlyAfterListener(repo.revokeKey('key_a', 'acct_a'))).toBe(true);
    expect(told.at(-1)).toEqual({ accountId: 'acct_a', stored: { key: 'revoked', account: 'active', limits: undefined } });
  });

  it("does not revoke another account's key, and tells nobody", async () => {
    const before = told.length;
    expect(await repo.revokeKey('key_b', 'acct_b')).toBe(false);
    expect(told.length).toBe(before);
    expect(await repo.keys.collection.findOne({ _id: 'key_b' } as never)).toMatchObject({ status: 'active' });
  });

  it("sets an active key's expiry (a roll with a delay), then waits for the listeners; a revoked key gets none", async () => {
    const at = new Date(Date.now() + 3_600_000);
    expect(await settlesOnlyAfterListener(repo.expireKey('key_b', 'acct_a', at))).toBe(true);
    expect(told.at(-1)?.accountId).toBe('acct_a');
    expect(await repo.keys.collection.findOne({ _id: 'key_b' } as never)).toMatchObject({ status: 'active', expires_at: at });
    const before = told.length;
    expect(await repo.expireKey('key_a', 'acct_a', at)).toBe(false); // revoked above
    expect(await repo.expireKey('key_b', 'acct_b', at)).toBe(false); // another account's
    expect(told.length).toBe(before);
    expect((await repo.keys.collection.findOne({ _id: 'key_a' } as never))?.['expires_at']).toBeUndefined();
  });

  it('disables an account and sets its limits, each told after the write', async () => {
    await settlesOnlyAfterListener(repo.setStatus('acct_a', 'disabled'));
    expect(told.at(-1)?.stored).toMatchObject({ account: 'disabled' });
    await settlesOnlyAfterListener(repo.setLimits('acct_a', { requests_per_minute: 7 }));
    expect(told.at(-1)?.stored).toMatchObject({ limits: { requests_per_minute: 7 } });
  });
});
