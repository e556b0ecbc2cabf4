import { waitFor } from '@tes/testing';
import { Browser, consent, continueConsent } from '../test/browser.js';
import { ACCOUNT, SERVICE, startHarness, stringsOf, type Harness } from '../test/harness.js';

/**
 * The consent flow against a real OAuth 2.0 authorization server (oidc-provider in its own
 * process), a real browser-like client, the real broker and the real database.
 */
describe('consent flow', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('answers authorization_required with an auth_url on the vault when the user has no connection', async () => {
    const reply = await h.credential({ user_id: 'u-none', scopes: ['repo'] });
    expect(reply).toEqual({
      status: 'authorization_required',
      auth_url: expect.stringMatching(new RegExp(`^${h.baseUrl}/oauth/consent/ey`)),
      message: expect.any(String),
    });
    // The same user and scopes get the same pending authorization (one consent, not one per task), each time through a fresh link.
    const again = await h.credential({ user_id: 'u-none', scopes: ['repo'], task_id: 'task_other' });
    expect(again.auth_url).not.toBe(reply.auth_url);
    expect(linkClaims(again.auth_url as string)['pa']).toBe(linkClaims(reply.auth_url as string)['pa']);
    expect(linkClaims(reply.auth_url as string)).toMatchObject({
      acct: ACCOUNT,
      env: 'live',
      usr: 'u-none',
      svc: SERVICE,
      aud: 'oauth-consent',
    });
    const c = linkClaims(reply.auth_url as string);
    expect((c['exp'] as number) - (c['iat'] as number)).toBe(900);
  });

  it('redirects to the provider with a signed state, PKCE and the union of default and needed scopes', async () => {
    const reply = await h.credential({ user_id: 'u-redirect', scopes: ['repo'] });
    const res = await continueConsent(reply.auth_url as string);
    expect(res.status).toBe(303);
    const loc = new URL(res.headers.get('location') as string);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${h.auth.issuer}/auth`);
    expect(loc.searchParams.get('client_id')).toBe(h.auth.clientId);
    expect(loc.searchParams.get('redirect_uri')).toBe(`${h.baseUrl}/oauth/callback`);
    expect(loc.searchParams.get('response_type')).toBe('code');
    expect(loc.searchParams.get('scope')?.split(' ').sort()).toEqual(['read:user', 'repo']);
    expect(loc.searchParams.get('code_challenge_method')).toBe('S256');
    expect(loc.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const state = loc.searchParams.get('state') as string;
    const claims = JSON.parse(Buffer.from(state.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({
      acct: ACCOUNT,
      env: 'live',
      usr: 'u-redirect',
      svc: SERVICE,
      scp: ['read:user', 'repo'],
      aud: 'oauth-state',
    });
    expect((claims['exp'] as number) - (claims['iat'] as number)).toBe(600);
    expect(res.headers.get('set-cookie')).toMatch(
      /^tes_oauth_[0-9a-f]{16}=[^;]+; Max-Age=600; Path=\/oauth\/callback; HttpOnly; SameSite=Lax$/,
    );
  });

  it('completes consent: code exchange, encrypted storage, a clean page, connection.changed authorized, then ok', async () => {
    const user = 'u-alice';
    const first = await h.credential({ user_id: user, scopes: ['repo'] });
    const browser = new Browser();
    const page = await consent(browser, first.auth_url as string);
    expect(page.url.startsWith(`${h.baseUrl}/oauth/callback?`)).toBe(true);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Connected — you may close this window');
    expect(page.text).not.toMatch(/<link|<script|https?:\/\/(?!127\.0\.0\.1)/i);
    expect(browser.visited.some((u) => u.startsWith(`${h.auth.issuer}/interaction/`))).toBe(true);
    expect((await h.auth.stats()).authorization_code).toBeGreaterThanOrEqual(1);

    const changed = await waitFor(() => h.changes.find((c) => c.user_id === user && c.outcome === 'authorized'), {
      what: 'connection.changed',
    });
    expect(changed).toEqual({
      account_id: ACCOUNT,
      environment: 'live',
      user_id: user,
      service: SERVICE,
      outcome: 'authorized',
      scopes: ['read:user', 'repo'],
    });

    const reply = await h.credential({ user_id: user, scopes: ['repo'] });
    expect(reply.status).toBe('ok');
    expect(reply.access_token).toEqual(expect.any(String));
    expect(Date.parse(reply.expires_at as string)).toBeGreaterThan(Date.now() + 3000_000);
    expect(await h.auth.apiStatus(reply.access_token as string)).toBe(200);

    // The database never holds a raw token: read every collection directly.
    const token = reply.access_token as string;
    const conn = await h.mongo.db!.collection('connections').findOne({ user_id: user });
    expect(conn).toMatchObject({ status: 'connected', scopes: ['read:user', 'repo'], key_id: 'k1', generation: 1 });
    expect(conn!['access_token_enc']).toMatch(/^v1\.k1\./);
    expect(conn!['refresh_token_enc']).toMatch(/^v1\.k1\./);
    for (const name of ['connections', 'claims', 'pending_authorizations', 'auth_attempts', 'outbox']) {
      const docs = await h.mongo.db!.collection(name).find({}).toArray();
      const all = stringsOf(docs).join('\n');
      expect(all).not.toContain(token);
    }
    // Nor a log line, nor the page, nor the event.
    expect(h.logLines().join('\n')).not.toContain(token);
    expect(page.text).not.toContain(token);
    expect(JSON.stringify(h.changes)).not.toContain(token);

    const listed = await h.list(user);
    expect(listed).toEqual({
      ok: true,
      connections: [{ service: SERVICE, scopes: ['read:user', 'repo'], status: 'connected', connected_at: expect.stringMatching(/Z$/) }],
    });
    expect(JSON.stringify(listed)).not.toContain(token);
  });

  it('isolates tokens per user, environment and account', async () => {
    const other = await h.credential({ user_id: 'u-alice', environment: 'test', scopes: ['repo'] });
    expect(other.status).toBe('authorization_required');
    const otherAccount = await h.credential({ user_id: 'u-alice', account_id: 'acct_other', scopes: ['repo'] });
    expect(otherAccount.status).toBe('authorization_required');
    // A sealed token moved onto another user's document does not decrypt (AES-GCM associated data).
    const db = h.mongo.db!;
    const alice = await db.collection('connections').findOne({ user_id: 'u-alice' });
    const { connectionIdOf } = await import('./domain/connection.js');
    const forgedId = connectionIdOf({ account_id: ACCOUNT, environment: 'live', user_id: 'u-mallory', service: SERVICE });
    await db.collection('connections').insertOne({ ...alice, _id: forgedId as never, user_id: 'u-mallory' });
    const stolen = await h.credential({ user_id: 'u-mallory', scopes: ['repo'] });
    expect(stolen.status).toBe('error');
    expect(stolen.access_token).toBeUndefined();
  });

  it('asks for the union of granted and needed scopes (incremental) and updates the grant in place', async () => {
    const user = 'u-bob';
    await consent(new Browser(), (await h.credential({ user_id: user, scopes: ['repo'] })).auth_url as string);
    const more = await h.credential({ user_id: user, scopes: ['repo', 'chat:write'] });
    expect(more.status).toBe('authorization_required');
    expect(more.message).toMatch(/additional/);
    const start = await continueConsent(more.auth_url as string);
    expect(new URL(start.headers.get('location') as string).searchParams.get('scope')?.split(' ').sort()).toEqual([
      'chat:write',
      'read:user',
      'repo',
    ]);

    const again = await h.credential({ user_id: user, scopes: ['repo', 'chat:write'] }); // that link is used: a fresh one
    const page = await consent(new Browser(), again.auth_url as string);
    expect(page.text).toContain('Connected');
    const ok = await h.credential({ user_id: user, scopes: ['repo', 'chat:write'] });
    expect(ok.status).toBe('ok');
    const docs = await h.mongo.db!.collection('connections').find({ user_id: user }).toArray();
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ scopes: ['chat:write', 'read:user', 'repo'], generation: 2, status: 'connected' });
    await waitFor(() => h.changes.filter((c) => c.user_id === user && c.outcome === 'authorized').length === 2, {
      what: 'two authorized events',
    });
  });

  it('shows a denial page and publishes connection.changed denied when the user refuses', async () => {
    const user = 'u-carol';
    const reply = await h.credential({ user_id: user, scopes: ['repo'] });
    const page = await consent(new Browser(), reply.auth_url as string, { deny: true });
    expect(page.url).toContain('/oauth/callback?error=access_denied');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Access not granted');
    const denied = await waitFor(() => h.changes.find((c) => c.user_id === user), { what: 'denied event' });
    expect(denied).toEqual({
      account_id: ACCOUNT,
      environment: 'live',
      user_id: user,
      service: SERVICE,
      outcome: 'denied',
      scopes: ['read:user', 'repo'],
    });
    expect((await h.credential({ user_id: user, scopes: ['repo'] })).status).toBe('authorization_required');
  });

  it('rejects a replayed state, a state from another browser, and a forged state', async () => {
    const user = 'u-dave';
    const browser = new Browser();
    const page = await consent(browser, (await h.credential({ user_id: user, scopes: ['repo'] })).auth_url as string);
    expect(page.text).toContain('Connected');
    const codesBefore = (await h.auth.stats()).authorization_code;

    // The same callback URL again, in the same browser: the state was single-use.
    const replay = await browser.get(page.url);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain('already been used');

    // A fresh consent whose callback is opened by another browser (no nonce cookie).
    const second = await h.credential({ user_id: 'u-erin', scopes: ['repo'] });
    const victim = new Browser();
    const start = await continueConsent(second.auth_url as string);
    const stateOnly = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
    const foreign = await victim.get(`${h.baseUrl}/oauth/callback?code=abc&state=${encodeURIComponent(stateOnly)}`);
    expect(foreign.status).toBe(400);
    expect(foreign.text).toContain('another browser');

    const forged = await victim.get(`${h.baseUrl}/oauth/callback?code=abc&state=${encodeURIComponent(stateOnly.slice(0, -4) + 'AAAA')}`);
    expect(forged.status).toBe(400);
    expect(forged.text).toContain('not valid');
    expect((await h.auth.stats()).authorization_code).toBe(codesBefore);
    expect(h.changes.filter((c) => c.user_id === 'u-erin')).toEqual([]);
  });

  it('shows a page naming the application and the user, and goes to the provider only on Continue', async () => {
    const reply = await h.credential({ user_id: 'u-page <b>', scopes: ['repo'] });
    const browser = new Browser();
    const page = await browser.get(reply.auth_url as string);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(new RegExp(`data-testid="application"><code>${ACCOUNT}</code>`));
    expect(page.text).toContain('data-testid="user"><code>u-page &lt;b&gt;</code>');
    expect(page.text).toContain('Continue to GitHub');
    expect(page.text).not.toMatch(/<script/i);
    // The Continue form may lead to the provider's origin (browsers check form-action on the redirect), nowhere else.
    expect(page.headers.get('content-security-policy')).toContain(`form-action 'self' ${new URL(h.auth.issuer).origin};`);
    expect(browser.visited.some((u) => u.startsWith(h.auth.issuer))).toBe(false);
    // Opening the page used nothing: opening it again shows it again.
    expect((await browser.get(reply.auth_url as string)).status).toBe(200);
  });

  it('refuses a reused consent link with a page asking for a new one', async () => {
    const reply = await h.credential({ user_id: 'u-reuse', scopes: ['repo'] });
    const first = await continueConsent(reply.auth_url as string);
    expect(first.status).toBe(303);
    const again = await new Browser().get(reply.auth_url as string);
    expect(again.status).toBe(410);
    expect(again.text).toContain('This link was used or has expired');
    expect(again.text).toContain('Ask the application for a new one');
    // The form posted again (the page kept open in another tab) is refused too, and starts nothing.
    const attempts = await h.mongo.db!.collection('auth_attempts').countDocuments();
    await expect(continueConsent(reply.auth_url as string)).rejects.toThrow(/not a consent page \(410\)/);
    expect(await h.mongo.db!.collection('auth_attempts').countDocuments()).toBe(attempts);
  });

  it('refuses an expired consent link (CONSENT_LINK_TTL_S)', async () => {
    const ttl = h.deps.settings.consentLinkTtlS;
    h.deps.settings.consentLinkTtlS = 1;
    try {
      const reply = await h.credential({ user_id: 'u-expiry', scopes: ['repo'] });
      expect((await fetch(reply.auth_url as string)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 2100));
      const res = await fetch(reply.auth_url as string);
      expect(res.status).toBe(410);
      expect(await res.text()).toContain('used or has expired');
    } finally {
      h.deps.settings.consentLinkTtlS = ttl;
    }
  });

  it('refuses Continue without the page cookie (a cross-site form post)', async () => {
    const reply = await h.credential({ user_id: 'u-csrf', scopes: ['repo'] });
    const token = new URL(reply.auth_url as string).pathname.split('/').pop() as string;
    const res = await fetch(`${h.baseUrl}/oauth/consent`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ token, csrf: 'x' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(403);
    // Not used up: the user can still continue from the page.
    expect((await continueConsent(reply.auth_url as string)).status).toBe(303);
  });

  it('renews a used or expired link for the same account only (consent_link.renew), and logs link ids shortened', async () => {
    const reply = await h.credential({ user_id: 'u-renew', scopes: ['repo'] });
    await continueConsent(reply.auth_url as string);
    const renewed = (await h.client.request(
      'consent_link.renew',
      { account_id: ACCOUNT, environment: 'live', auth_url: reply.auth_url as string },
      { timeoutMs: 5000 },
    )) as {
      ok: boolean;
      auth_url: string;
      expires_at: string;
    };
    expect(renewed).toEqual({ ok: true, auth_url: expect.stringContaining('/oauth/consent/'), expires_at: expect.stringMatching(/Z$/) });
    expect(linkClaims(renewed.auth_url)['pa']).toBe(linkClaims(reply.auth_url as string)['pa']);
    expect((await continueConsent(renewed.auth_url)).status).toBe(303);
    // A waiting task stored before consent links carries /oauth/start/<pa>: renewed the same way.
    const legacy = (await h.client.request(
      'consent_link.renew',
      {
        account_id: ACCOUNT,
        environment: 'live',
        auth_url: `${h.baseUrl}/oauth/start/${String(linkClaims(reply.auth_url as string)['pa'])}`,
      },
      { timeoutMs: 5000 },
    )) as { ok: boolean; auth_url: string };
    expect(legacy.ok).toBe(true);
    expect((await new Browser().get(legacy.auth_url)).status).toBe(200);
    for (const q of [
      { account_id: 'acct_other', environment: 'live' as const, auth_url: reply.auth_url as string },
      { account_id: ACCOUNT, environment: 'test' as const, auth_url: reply.auth_url as string },
      { account_id: ACCOUNT, environment: 'live' as const, auth_url: `${h.baseUrl}/oauth/consent/forged.token.here` },
    ]) {
      expect(await h.client.request('consent_link.renew', q, { timeoutMs: 5000 })).toMatchObject({
        ok: false,
        error: { code: 'not_found' },
      });
    }
    const logs = h.logLines().join('\n');
    const { jti, pa } = linkClaims(reply.auth_url as string) as { jti: string; pa: string };
    expect(logs).toContain(jti.slice(0, 10));
    expect(logs).not.toContain(jti);
    expect(logs).not.toContain(pa);
  });

  it('answers the old bearer links (/oauth/start/<id>) with the used-or-expired page', async () => {
    const res = await fetch(`${h.baseUrl}/oauth/start/pa_doesnotexist`);
    expect(res.status).toBe(410);
    expect(await res.text()).toContain('Ask the application for a new one');
  });

  it('answers error for a service without a configured provider', async () => {
    expect(await h.credential({ user_id: 'u-x', service: 'notion', scopes: [] })).toEqual({
      status: 'error',
      message: expect.stringMatching(/not configured/),
    });
    expect(await h.credential({ user_id: 'u-x', service: 'nope', scopes: [] })).toEqual({
      status: 'error',
      message: expect.stringMatching(/nope/),
    });
  });
});

/** The claims of a consent link (a JWT in the path). */
function linkClaims(authUrl: string): Record<string, unknown> {
  const token = new URL(authUrl).pathname.split('/').pop() as string;
  return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
}
