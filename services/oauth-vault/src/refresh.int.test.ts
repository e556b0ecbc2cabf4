import { waitFor } from '@tes/testing';
import { Browser, consent } from '../test/browser.js';
import { ACCOUNT, SERVICE, startHarness, type Harness } from '../test/harness.js';
import { aadOf } from './domain/connection-docs.js';
import { connectionIdOf, type ConnectionDoc } from './domain/connection.js';

/**
 * Refresh, expiry and health against the real authorization server. Its access tokens live
 * 30 s; a token is "close to expiry" in its last 15 s (half its lifetime, under the 60 s
 * margin), which the tests reach by moving `expires_at` 5 s ahead instead of waiting. The
 * server rotates refresh tokens on every use and revokes the whole grant when a spent one is
 * used again, so a double spend would show as a dead grant.
 */
describe('refresh', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ accessTokenTtl: 30 });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  const idOf = (user: string) => connectionIdOf({ account_id: ACCOUNT, environment: 'live', user_id: user, service: SERVICE });
  const docOf = async (user: string) =>
    (await h.mongo.db!.collection('connections').findOne({ _id: idOf(user) as never })) as unknown as ConnectionDoc;
  const refreshTokenOf = (doc: ConnectionDoc) => h.deps.ring.decrypt(doc.refresh_token_enc as string, aadOf(doc._id, 'refresh_token'));
  /** As if 25 of the token's 30 s had passed. */
  const expireSoon = async (user: string) => {
    await h.mongo
      .db!.collection('connections')
      .updateOne({ _id: idOf(user) as never }, { $set: { expires_at: new Date(Date.now() + 5000) } });
  };
  const connect = async (user: string) => {
    const reply = await h.credential({ user_id: user, scopes: ['repo'] });
    const page = await consent(new Browser(), reply.auth_url as string);
    expect(page.text).toContain('Connected');
    return docOf(user);
  };

  it('refreshes at use when the token is close to expiry, storing the rotated refresh token', async () => {
    const before = await connect('r-rotate');
    const fresh = await h.credential({ user_id: 'r-rotate', scopes: ['repo'] });
    expect((await docOf('r-rotate')).generation).toBe(before.generation);
    await expireSoon('r-rotate');
    const stats0 = await h.auth.stats();
    const reply = await h.credential({ user_id: 'r-rotate', scopes: ['repo'] });
    expect(reply.status).toBe('ok');
    const stats1 = await h.auth.stats();
    expect(stats1.refresh_token - stats0.refresh_token).toBe(1);
    const after = await docOf('r-rotate');
    expect(after.generation).toBe(before.generation + 1);
    expect(refreshTokenOf(after)).not.toBe(refreshTokenOf(before));
    expect(after.access_token_enc).not.toBe(before.access_token_enc);
    expect(after.refreshed_at).toBeInstanceOf(Date);
    expect(reply.access_token).not.toBe(fresh.access_token);
    expect(await h.auth.apiStatus(reply.access_token as string)).toBe(200);
    // The new token has its whole lifetime ahead: the next use does not refresh again.
    await h.credential({ user_id: 'r-rotate', scopes: ['repo'] });
    expect((await h.auth.stats()).refresh_token).toBe(stats1.refresh_token);
  });

  it('makes exactly one refresh for 20 parallel requests on an expiring token, across two replicas', async () => {
    const replica = await h.addReplica();
    try {
      await connect('r-parallel');
      await expireSoon('r-parallel');
      const stats0 = await h.auth.stats();
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, i) => h.credential({ user_id: 'r-parallel', scopes: ['repo'], task_id: `task_${i}` })),
      );
      const stats1 = await h.auth.stats();
      expect(replies.map((r) => r.status)).toEqual(Array(20).fill('ok'));
      expect(new Set(replies.map((r) => r.access_token)).size).toBe(1);
      expect(stats1.refresh_token - stats0.refresh_token).toBe(1);
      expect(stats1.refresh_errors - stats0.refresh_errors).toBe(0);
      // The grant is alive: no rotated refresh token was spent twice.
      expect(await h.auth.apiStatus(replies[0]?.access_token as string)).toBe(200);
      const next = await h.credential({ user_id: 'r-parallel', scopes: ['repo'] });
      expect(next.status).toBe('ok');
    } finally {
      await replica.close();
    }
  });

  it('marks the connection broken and answers expired when the provider refuses the refresh', async () => {
    const doc = await connect('r-revoked-at-provider');
    // The user removes the app at the provider: the grant (and its refresh token) is revoked.
    expect(await h.auth.revoke(refreshTokenOf(doc))).toBe(200);
    await expireSoon('r-revoked-at-provider');
    const reply = await h.credential({ user_id: 'r-revoked-at-provider', scopes: ['repo'] });
    expect(reply).toEqual({
      status: 'expired',
      auth_url: expect.stringContaining('/oauth/consent/'),
      message: expect.stringMatching(/re-authorize/),
    });
    const broken = await docOf('r-revoked-at-provider');
    expect(broken).toMatchObject({
      status: 'broken',
      access_token_enc: null,
      refresh_token_enc: null,
      broken_reason: 'refresh_failed:invalid_grant',
    });
    expect((await h.list('r-revoked-at-provider')).connections).toEqual([expect.objectContaining({ service: SERVICE, status: 'broken' })]);
    // Later requests keep answering expired until the user re-authorizes.
    expect((await h.credential({ user_id: 'r-revoked-at-provider', scopes: ['repo'] })).status).toBe('expired');
    const page = await consent(new Browser(), reply.auth_url as string);
    expect(page.text).toContain('Connected');
    expect((await h.credential({ user_id: 'r-revoked-at-provider', scopes: ['repo'] })).status).toBe('ok');
    expect((await h.list('r-revoked-at-provider')).connections[0]?.status).toBe('connected');
  });

  it('refreshes on force_refresh (the provider rejected the token), once', async () => {
    await connect('r-force');
    const first = await h.credential({ user_id: 'r-force', scopes: ['repo'] });
    await new Promise((r) => setTimeout(r, 2100));
    const stats0 = await h.auth.stats();
    const forced = await Promise.all(
      Array.from({ length: 5 }, () => h.credential({ user_id: 'r-force', scopes: ['repo'], force_refresh: true })),
    );
    expect((await h.auth.stats()).refresh_token - stats0.refresh_token).toBe(1);
    expect(new Set(forced.map((r) => r.access_token)).size).toBe(1);
    expect(forced[0]?.access_token).not.toBe(first.access_token);
  });

  it('keeps a still-valid token when the provider is briefly unavailable', async () => {
    await connect('r-transient');
    await expireSoon('r-transient');
    await h.auth.configure({ failTokenEndpoint: 1 });
    const before = await docOf('r-transient');
    const reply = await h.credential({ user_id: 'r-transient', scopes: ['repo'] });
    expect(reply.status).toBe('ok');
    expect(reply.access_token).toBe(h.deps.ring.decrypt(before.access_token_enc as string, aadOf(before._id, 'access_token')));
    expect((await docOf('r-transient')).status).toBe('connected');
    // Next time the provider answers: refreshed.
    const again = await h.credential({ user_id: 'r-transient', scopes: ['repo'] });
    expect(again.access_token).not.toBe(reply.access_token);
  });

  it('answers error (retryable), not expired, when the token has expired and the provider is down', async () => {
    await connect('r-down');
    await h.mongo
      .db!.collection('connections')
      .updateOne({ _id: idOf('r-down') as never }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    await h.auth.configure({ failTokenEndpoint: 1 });
    const reply = await h.credential({ user_id: 'r-down', scopes: ['repo'] });
    expect(reply).toEqual({ status: 'error', message: expect.stringMatching(/retry/) });
    expect((await docOf('r-down')).status).toBe('connected');
  });

  it('takes over the refresh lease of a replica that died mid-refresh', async () => {
    const doc = await connect('r-takeover');
    await expireSoon('r-takeover');
    const leaseId = `lease:${doc._id}:g${doc.generation + 1}:a0`;
    await h.mongo.db!.collection('claims').insertOne({
      _id: leaseId as never,
      kind: 'refresh',
      connection_id: doc._id,
      generation: doc.generation + 1,
      attempt: 0,
      holder: 'h_dead',
      created_at: new Date(),
      expires_at: new Date(Date.now() + 1500),
    });
    const stats0 = await h.auth.stats();
    const t0 = Date.now();
    const reply = await h.credential({ user_id: 'r-takeover', scopes: ['repo'] });
    expect(reply.status).toBe('ok');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect((await h.auth.stats()).refresh_token - stats0.refresh_token).toBe(1);
    expect((await docOf('r-takeover')).generation).toBe(doc.generation + 1);
  });

  it('refreshes in the background sweep when next_refresh_at comes', async () => {
    const doc = await connect('r-sweep');
    await h.mongo
      .db!.collection('connections')
      .updateOne({ _id: doc._id as never }, { $set: { next_refresh_at: new Date(Date.now() - 1000) } });
    const stats0 = await h.auth.stats();
    await h.sweeper.tick();
    expect((await h.auth.stats()).refresh_token - stats0.refresh_token).toBe(1);
    const after = await docOf('r-sweep');
    expect(after.generation).toBe(doc.generation + 1);
    expect(after.next_refresh_at!.getTime()).toBeGreaterThan(Date.now());
    expect(refreshTokenOf(after)).not.toBe(refreshTokenOf(doc));
  });

  it('health probe: marks a connection broken when the provider no longer accepts it, before a task needs it', async () => {
    const healthy = await connect('r-probe-ok');
    const dead = await connect('r-probe-dead');
    const past = new Date(Date.now() - 1000);
    await h.mongo
      .db!.collection('connections')
      .updateMany({ _id: { $in: [healthy._id, dead._id] as never[] } }, { $set: { next_probe_at: past } });
    expect(await h.auth.revoke(refreshTokenOf(dead))).toBe(200);
    const calls0 = (await h.auth.stats()).api_calls;
    await h.sweeper.tick();
    expect((await h.auth.stats()).api_calls - calls0).toBe(2);
    expect(await docOf('r-probe-dead')).toMatchObject({ status: 'broken', access_token_enc: null });
    expect((await h.list('r-probe-dead')).connections[0]?.status).toBe('broken');
    const ok = await docOf('r-probe-ok');
    expect(ok.status).toBe('connected');
    expect(ok.last_probe_at).toBeInstanceOf(Date);
  });

  it('never logs a token', async () => {
    await waitFor(() => h.logLines().length > 0);
    const all = h.logLines().join('\n');
    const docs = (await h.mongo.db!.collection('connections').find({ status: 'connected' }).toArray()) as unknown as ConnectionDoc[];
    expect(docs.length).toBeGreaterThan(0);
    for (const d of docs) {
      expect(all).not.toContain(refreshTokenOf(d));
      expect(all).not.toContain(h.deps.ring.decrypt(d.access_token_enc as string, aadOf(d._id, 'access_token')));
    }
  });
});
