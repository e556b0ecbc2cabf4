import { waitFor } from '@tes/testing';
import { ACCOUNT, SERVICE, startHarness, type Harness } from '../test/harness.js';
import { revokeConnection } from './domain/revoke-connection.use-case.js';
import { connectionIdOf, type ConnectionDoc } from './domain/connection.js';

/** The sandbox consent page of the test environment (docs/oauth.md "Sandbox consent"), against the real vault. */
describe('sandbox consent', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  const decide = (url: string, decision: string) =>
    fetch(url, { method: 'POST', body: new URLSearchParams({ decision }), redirect: 'manual' });
  const docOf = async (user: string) =>
    (await h.mongo.db!.collection('connections').findOne({
      _id: connectionIdOf({ account_id: ACCOUNT, environment: 'test', user_id: user, service: SERVICE }) as never,
    })) as unknown as ConnectionDoc | null;

  it('answers a test-environment credential.get with the sandbox page, stores a sandbox connection on Allow, and never calls the provider', async () => {
    const before = await h.auth.stats();
    const reply = await h.credential({ user_id: 's-ann', environment: 'test', scopes: ['repo'] });
    expect(reply).toMatchObject({ status: 'authorization_required', auth_url: expect.stringMatching(/\/sandbox\/consent\/pa_/) });
    // The same link for a second task of the same user.
    expect((await h.credential({ user_id: 's-ann', environment: 'test', scopes: ['repo'] })).auth_url).toBe(reply.auth_url);

    expect((await decide(reply.auth_url as string, 'allow')).status).toBe(200);
    expect(await docOf('s-ann')).toMatchObject({ status: 'connected', token_type: 'sandbox', expires_at: null, next_probe_at: null });
    const ev = await waitFor(() => h.changes.find((c) => c.user_id === 's-ann' && c.outcome === 'authorized'), {
      what: 'authorized event',
    });
    expect(ev).toMatchObject({ environment: 'test', service: SERVICE, scopes: expect.arrayContaining(['repo']) });
    expect(await h.credential({ user_id: 's-ann', environment: 'test', scopes: ['repo'] })).toMatchObject({ status: 'ok' });

    // Revoking a sandbox connection deletes it here and calls no provider.
    const revoked = await revokeConnection({ account_id: ACCOUNT, environment: 'test', user_id: 's-ann', service: SERVICE }, h.deps);
    expect(revoked).toEqual({ ok: true, provider_revoked: false });
    const after = await h.auth.stats();
    expect(after.revocations).toBe(before.revocations);
    // Asked again after the revocation: a new link (the used one is gone).
    const next = await h.credential({ user_id: 's-ann', environment: 'test', scopes: ['repo'] });
    expect(next.auth_url).not.toBe(reply.auth_url);
    expect((await fetch(reply.auth_url as string)).status).toBe(404);
  });

  it('refuses a live pending authorization on the sandbox page: a live connection is only made at the provider', async () => {
    const live = await h.credential({ user_id: 's-bob', scopes: ['repo'] });
    // The live link is a signed consent token naming its pending authorization (`pa`).
    const token = /\/oauth\/consent\/([A-Za-z0-9_.-]+)/.exec(live.auth_url as string)?.[1] ?? '';
    const id = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8') || '{}') as { pa?: string }).pa;
    expect(id).toBeDefined();
    const url = `${h.baseUrl}/sandbox/consent/${id}`;
    expect((await fetch(url)).status).toBe(404);
    expect((await decide(url, 'allow')).status).toBe(404);
    expect(await h.mongo.db!.collection('connections').countDocuments({ user_id: 's-bob' })).toBe(0);
  });

  it('records Deny as connection.changed denied, with no connection', async () => {
    const reply = await h.credential({ user_id: 's-cat', environment: 'test', scopes: ['repo'] });
    const res = await decide(reply.auth_url as string, 'deny');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Access not granted (sandbox)');
    await waitFor(() => h.changes.find((c) => c.user_id === 's-cat' && c.outcome === 'denied'), { what: 'denied event' });
    expect(await docOf('s-cat')).toBeNull();
  });
});
