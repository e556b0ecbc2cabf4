import type { Account, ApiKey } from './account.js';
import { CredentialsCache, type Credentials, type CredentialsSource } from './credentials-cache.js';

/** Keys and accounts in memory, counting reads; a read can be held open to interleave an invalidation. */
class Source implements CredentialsSource {
  reads = 0;
  readonly keys = new Map<string, ApiKey>();
  readonly accounts = new Map<string, Account>();
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((r) => (this.openGate = r));
  }
  release(): void {
    this.openGate?.();
    this.gate = undefined;
  }

  async keyAndAccount(hash: string): Promise<Credentials> {
    this.reads++;
    // The snapshot is taken when the read starts, as a database read would be.
    const key = this.keys.get(hash) ?? null;
    const account = key ? (this.accounts.get(key.account_id) ?? null) : null;
    const snapshot = { key: key && { ...key }, account: account && { ...account } };
    if (this.gate) await this.gate;
    return snapshot;
  }

  addKey(hash: string, accountId: string): void {
    this.accounts.set(accountId, { _id: accountId, name: accountId, plan: 'prototyping', status: 'active', created_at: new Date() });
    this.keys.set(hash, {
      _id: `key_${hash}`,
      account_id: accountId,
      environment: 'test',
      hash,
      prefix: 'pk_test_',
      last4: hash.slice(-4),
      status: 'active',
      created_at: new Date(),
    });
  }
}

describe('CredentialsCache', () => {
  let now = 0;
  let attachment: number | undefined = 1;
  let source: Source;
  let cache: CredentialsCache;

  beforeEach(() => {
    now = 0;
    attachment = 1;
    source = new Source();
    source.addKey('h1', 'acct_a');
    source.addKey('h2', 'acct_b');
    cache = new CredentialsCache(source, 60_000, () => now);
    cache.followChanges(() => attachment);
  });

  it('reads a key once while it follows changes, and again after its account is invalidated', async () => {
    expect((await cache.keyAndAccount('h1')).key?.status).toBe('active');
    await cache.keyAndAccount('h1');
    expect(source.reads).toBe(1);

    source.keys.get('h1')!.status = 'revoked';
    cache.invalidate('acct_a');
    expect((await cache.keyAndAccount('h1')).key?.status).toBe('revoked');
    expect(source.reads).toBe(2);
  });

  it("drops only the invalidated account's keys", async () => {
    await cache.keyAndAccount('h1');
    await cache.keyAndAccount('h2');
    cache.invalidate('acct_b');
    await cache.keyAndAccount('h1');
    await cache.keyAndAccount('h2');
    expect(source.reads).toBe(3);
  });

  it('reads on every request while its change queue is not attached', async () => {
    attachment = undefined;
    await cache.keyAndAccount('h1');
    source.accounts.get('acct_a')!.status = 'disabled';
    expect((await cache.keyAndAccount('h1')).account?.status).toBe('disabled');
    expect(source.reads).toBe(2);
  });

  it('reads again once the queue was attached anew (changes published meanwhile are lost)', async () => {
    await cache.keyAndAccount('h1');
    attachment = 2;
    await cache.keyAndAccount('h1');
    await cache.keyAndAccount('h1');
    expect(source.reads).toBe(2);
  });

  it('keeps an entry for at most its TTL (the safety net for a lost announcement)', async () => {
    await cache.keyAndAccount('h1');
    now = 44_000; // under 75 % of the TTL: always kept
    await cache.keyAndAccount('h1');
    expect(source.reads).toBe(1);
    now = 60_001;
    await cache.keyAndAccount('h1');
    expect(source.reads).toBe(2);
  });

  it('never keeps an unknown key, so a key created later works at once', async () => {
    expect((await cache.keyAndAccount('h3')).key).toBeNull();
    source.addKey('h3', 'acct_c');
    expect((await cache.keyAndAccount('h3')).key?.status).toBe('active');
    expect(source.reads).toBe(2);
  });

  it('does not keep a read that was under way when an invalidation arrived', async () => {
    source.hold();
    const inFlight = cache.keyAndAccount('h1'); // reads the key while it is still active
    source.keys.get('h1')!.status = 'revoked';
    cache.invalidate('acct_a');
    source.release();
    expect((await inFlight).key?.status).toBe('active'); // that request raced the revocation, as without a cache
    expect((await cache.keyAndAccount('h1')).key?.status).toBe('revoked');
  });

  it('shares one read between concurrent requests with the same key', async () => {
    source.hold();
    const both = Promise.all([cache.keyAndAccount('h1'), cache.keyAndAccount('h1')]);
    source.release();
    await both;
    expect(source.reads).toBe(1);
  });

  it('reads every time with a TTL of 0', async () => {
    const off = new CredentialsCache(source, 0, () => now);
    off.followChanges(() => 1);
    await off.keyAndAccount('h1');
    await off.keyAndAccount('h1');
    expect(source.reads).toBe(2);
  });
});
