import { randomBytes } from 'node:crypto';
import type { CredentialGet, CredentialReply, Environment, ProviderDelete, ProviderRegister } from '@tes/contracts';
import { waitFor } from '@tes/testing';
import { startAuthServer, type AuthServer } from '../test/auth-server.js';
import { Browser, consent, continueConsent } from '../test/browser.js';
import { OAuthClient } from './oauth-providers/oauth-client.js';
import { registerProvider } from './domain/custom-providers.use-case.js';
import { ACCOUNT, startHarness, stringsOf, type Harness } from '../test/harness.js';
import { aadOf } from './domain/connection-docs.js';
import { connectionIdOf, type ConnectionDoc } from './domain/connection.js';

const TOOL = 'acme_crm';
const DEPLOYED = ['github', 'slack', 'google_calendar', 'gmail', 'notion', 'crm'];

/**
 * Custom tools' OAuth providers, registered at run time through provider.register and used by
 * the whole flow. The tool has its own real authorization server (oidc-provider, its own
 * process) knowing one client, `acme-client` with a random secret: a code exchange, refresh or
 * revocation there only succeeds with the registered credentials. The deployment's `github`
 * (and an env-declared `crm`) point at the harness's other server, with another client.
 */
describe("custom tools' OAuth providers", () => {
  let h: Harness;
  let acme: AuthServer;

  beforeAll(async () => {
    h = await startHarness({ envFrom: (auth) => ({ OAUTH_CUSTOM_PROVIDERS: 'crm', ...auth.providerEnv('crm') }) });
    acme = await startAuthServer({
      redirectUri: `${h.baseUrl}/oauth/callback`,
      clientId: 'acme-client',
      clientSecret: `acme-secret-${randomBytes(16).toString('hex')}`,
    });
  }, 60_000);

  afterAll(async () => {
    await acme?.close();
    await h?.close();
  });

  const db = () => h.mongo.db!;
  const registration = (o: Partial<ProviderRegister> = {}): ProviderRegister => ({
    account_id: ACCOUNT,
    environment: 'live',
    service: TOOL,
    display_name: 'Acme CRM',
    authorize_url: `${acme.issuer}/auth`,
    token_url: `${acme.issuer}/token`,
    revocation_url: `${acme.issuer}/token/revocation`,
    scopes: ['read:user'],
    client_id: acme.clientId,
    client_secret: acme.clientSecret,
    ...o,
  });
  const register = async (o: Partial<ProviderRegister> = {}) =>
    await h.client.request('provider.register', registration(o), { timeoutMs: 20_000 });
  const unregister = async (o: Partial<ProviderDelete> = {}) =>
    await h.client.request('provider.delete', { account_id: ACCOUNT, environment: 'live', service: TOOL, ...o }, { timeoutMs: 20_000 });
  const ask = (user: string, o: Partial<CredentialGet> = {}): Promise<CredentialReply> =>
    h.credential({ user_id: user, service: TOOL, scopes: ['repo'], ...o });
  const idOf = (user: string, service = TOOL, environment: Environment = 'live', account = ACCOUNT) =>
    connectionIdOf({ account_id: account, environment, user_id: user, service });
  const docOf = async (user: string, service = TOOL) =>
    (await db()
      .collection('connections')
      .findOne({ _id: idOf(user, service) as never })) as unknown as ConnectionDoc | null;
  const connect = async (user: string, o: Partial<CredentialGet> = {}) => {
    const reply = await ask(user, o);
    expect(reply.status).toBe('authorization_required');
    const page = await consent(new Browser(), reply.auth_url as string);
    expect(page.text).toContain('Connected');
    return page;
  };
  /** Where an auth_url sends the browser: the provider's authorize request. */
  const authorizeRequest = async (authUrl: string) => {
    const res = await continueConsent(authUrl);
    expect(res.status).toBe(303);
    return new URL(res.headers.get('location') as string);
  };
  /** As if the access token were a few seconds from expiry (it lives an hour). */
  const expireSoon = async (user: string) => {
    await db()
      .collection('connections')
      .updateOne({ _id: idOf(user) as never }, { $set: { expires_at: new Date(Date.now() + 5000) } });
  };
  const noProvider = { status: 'error', message: expect.stringMatching(/No OAuth provider .*acme_crm|No OAuth provider .*iso_tool/) };

  it('runs consent at the registered authorization server with the registered client, then answers ok', async () => {
    expect(await register()).toEqual({ ok: true });
    const first = await ask('c-alice');
    expect(first).toEqual({
      status: 'authorization_required',
      auth_url: expect.stringMatching(new RegExp(`^${h.baseUrl}/oauth/consent/`)),
      message: expect.stringContaining('Acme CRM'),
    });

    const loc = await authorizeRequest(first.auth_url as string);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${acme.issuer}/auth`);
    expect(acme.issuer).not.toBe(h.auth.issuer);
    expect(loc.searchParams.get('client_id')).toBe('acme-client');
    expect(loc.searchParams.get('redirect_uri')).toBe(`${h.baseUrl}/oauth/callback`);
    expect(loc.searchParams.get('scope')?.split(' ')).toEqual(['read:user', 'repo']);
    expect(loc.searchParams.get('code_challenge_method')).toBe('S256');
    const state = loc.searchParams.get('state') as string;
    const claims = JSON.parse(Buffer.from(state.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ acct: ACCOUNT, env: 'live', usr: 'c-alice', svc: TOOL, aud: 'oauth-state' });

    const acme0 = await acme.stats();
    const deployment0 = await h.auth.stats();
    const page = await consent(new Browser(), (await ask('c-alice')).auth_url as string); // that link was used: a fresh one
    expect(page.status).toBe(200);
    expect(page.text).toContain('Connected — you may close this window');
    expect(page.text).toContain('Acme CRM is now connected');
    // The code was exchanged at the tool's server (which only accepts acme-client and its secret), not the deployment's.
    expect((await acme.stats()).authorization_code).toBe(acme0.authorization_code + 1);
    expect((await h.auth.stats()).authorization_code).toBe(deployment0.authorization_code);

    const changed = await waitFor(() => h.changes.find((c) => c.user_id === 'c-alice' && c.service === TOOL), {
      what: 'connection.changed authorized',
      timeoutMs: 30_000,
    });
    expect(changed).toEqual({
      account_id: ACCOUNT,
      environment: 'live',
      user_id: 'c-alice',
      service: TOOL,
      outcome: 'authorized',
      scopes: ['read:user', 'repo'],
    });

    const ok = await ask('c-alice');
    expect(ok).toEqual({ status: 'ok', access_token: expect.any(String), expires_at: expect.any(String) });
    expect(await acme.apiStatus(ok.access_token as string)).toBe(200);
    expect(await h.auth.apiStatus(ok.access_token as string)).toBe(401);
    expect(await docOf('c-alice')).toMatchObject({ status: 'connected', scopes: ['read:user', 'repo'], service: TOOL });

    // The settings page names the tool as registered.
    const { token } = h.deps.signer.signSettings({ acct: ACCOUNT, env: 'live', usr: 'c-alice' }, 600);
    const settings = await new Browser().get(`${h.baseUrl}/settings?token=${encodeURIComponent(token)}`);
    expect(settings.status).toBe(200);
    expect(settings.text).toContain('Acme CRM');
  });

  it('stores the client secret only sealed, bound to its account, environment and service', async () => {
    const secret = acme.clientSecret;
    const doc = await db()
      .collection('custom_providers')
      .findOne({ _id: `${ACCOUNT}:live:${TOOL}` as never });
    expect(doc).toMatchObject({
      account_id: ACCOUNT,
      environment: 'live',
      service: TOOL,
      display_name: 'Acme CRM',
      authorize_url: `${acme.issuer}/auth`,
      token_url: `${acme.issuer}/token`,
      revocation_url: `${acme.issuer}/token/revocation`,
      scopes: ['read:user'],
      client_id: 'acme-client',
      pkce: true,
      token_auth: 'post',
      key_id: 'k1',
    });
    expect(doc!['client_secret_enc']).toMatch(/^v1\.k1\./);
    expect(doc).not.toHaveProperty('client_secret');

    // No collection, log line or event holds the raw secret.
    for (const { name } of await db().listCollections().toArray()) {
      const all = stringsOf(await db().collection(name).find({}).toArray()).join('\n');
      expect(all).not.toContain(secret);
    }
    expect(h.logLines().length).toBeGreaterThan(0);
    expect(h.logLines().join('\n')).not.toContain(secret);
    expect(JSON.stringify(h.changes)).not.toContain(secret);

    // A sealed secret copied onto another account's provider does not open there.
    await db()
      .collection('custom_providers')
      .insertOne({ ...doc, _id: `acct_thief:live:${TOOL}` as never, account_id: 'acct_thief' });
    const stolen = await ask('c-mallory', { account_id: 'acct_thief' });
    expect(stolen.status).toBe('error');
    expect(stolen.auth_url).toBeUndefined();
    await db()
      .collection('custom_providers')
      .deleteOne({ _id: `acct_thief:live:${TOOL}` as never });
  });

  it('uses a re-registered client secret at once, for the code exchange and for refreshes', async () => {
    // A wrong secret: the tool's server refuses the code exchange; nothing is connected.
    expect(await register({ client_secret: 'not-the-secret' })).toEqual({ ok: true });
    const reply = await ask('c-bob');
    const failed = await consent(new Browser(), reply.auth_url as string);
    expect(failed.status).toBe(502);
    expect(failed.text).toContain('could not be completed');
    expect(await docOf('c-bob')).toBeNull();

    // The right secret again: a fresh link to the same authorization now completes.
    expect(await register()).toEqual({ ok: true });
    expect((await consent(new Browser(), (await ask('c-bob')).auth_url as string)).text).toContain('Connected');
    expect((await ask('c-bob')).status).toBe('ok');

    // A refresh with a wrong secret is refused by the server (invalid_client): the connection breaks.
    expect(await register({ client_secret: 'not-the-secret' })).toEqual({ ok: true });
    const refreshes0 = (await acme.stats()).refresh_token;
    await expireSoon('c-bob');
    const expired = await ask('c-bob');
    expect(expired).toEqual({
      status: 'expired',
      auth_url: expect.stringMatching(new RegExp(`^${h.baseUrl}/oauth/consent/`)),
      message: expect.stringContaining('Acme CRM'),
    });
    expect(await docOf('c-bob')).toMatchObject({
      status: 'broken',
      broken_reason: 'refresh_failed:invalid_client',
      access_token_enc: null,
    });
    expect((await acme.stats()).refresh_token).toBe(refreshes0);

    // Re-registered right: re-consent through the expired answer's link works.
    expect(await register()).toEqual({ ok: true });
    expect((await consent(new Browser(), expired.auth_url as string)).text).toContain('Connected');
    expect((await ask('c-bob')).status).toBe('ok');
  });

  it('refreshes (at use and in the sweep) and revokes (RFC 7009) at the registered endpoints', async () => {
    await connect('c-carol');
    const before = (await docOf('c-carol')) as ConnectionDoc;
    const stats0 = await acme.stats();
    await expireSoon('c-carol');
    const atUse = await ask('c-carol');
    expect(atUse.status).toBe('ok');
    expect((await acme.stats()).refresh_token).toBe(stats0.refresh_token + 1);
    expect((await docOf('c-carol'))?.generation).toBe(before.generation + 1);

    await db()
      .collection('connections')
      .updateOne({ _id: idOf('c-carol') as never }, { $set: { next_refresh_at: new Date(Date.now() - 1000) } });
    await h.sweeper.tick();
    expect((await acme.stats()).refresh_token).toBe(stats0.refresh_token + 2);
    const doc = (await docOf('c-carol')) as ConnectionDoc;
    expect(doc.generation).toBe(before.generation + 2);

    const access = h.deps.ring.decrypt(doc.access_token_enc as string, aadOf(doc._id, 'access_token'));
    const refresh = h.deps.ring.decrypt(doc.refresh_token_enc as string, aadOf(doc._id, 'refresh_token'));
    expect(await acme.apiStatus(access)).toBe(200);
    expect(await h.revoke('c-carol', TOOL)).toEqual({ ok: true });
    expect(await acme.revokedTokens()).toEqual(expect.arrayContaining([refresh]));
    expect(await acme.apiStatus(access)).toBe(401);
    expect(await docOf('c-carol')).toMatchObject({ status: 'revoked', access_token_enc: null, refresh_token_enc: null });
  });

  it("refuses to register or delete a service the deployment provides, and leaves the deployment's provider alone", async () => {
    for (const service of DEPLOYED) {
      expect(await register({ service })).toEqual({
        ok: false,
        error: { code: 'invalid_request', message: expect.stringContaining(service) },
      });
    }
    expect(
      await db()
        .collection('custom_providers')
        .countDocuments({ service: { $in: DEPLOYED } }),
    ).toBe(0);

    // github still goes to the deployment's server and client, and provider.delete github deletes nothing.
    const gh = await h.credential({ user_id: 'c-dave', scopes: ['repo'] });
    const loc = await authorizeRequest(gh.auth_url as string);
    expect(`${loc.origin}${loc.pathname}`).toBe(`${h.auth.issuer}/auth`);
    expect(loc.searchParams.get('client_id')).toBe(h.auth.clientId);
    const ghAgain = await h.credential({ user_id: 'c-dave', scopes: ['repo'] });
    expect((await consent(new Browser(), ghAgain.auth_url as string)).text).toContain('Connected');
    expect(await unregister({ service: 'github' })).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: expect.stringContaining('github') },
    });
    expect((await docOf('c-dave', 'github'))?.status).toBe('connected');
    expect((await h.credential({ user_id: 'c-dave', scopes: ['repo'] })).status).toBe('ok');
  });

  it('provider.delete forgets the provider, its connections and pending authorizations, without calling the provider', async () => {
    await connect('c-erin');
    const pending = await ask('c-frank');
    expect(pending.status).toBe('authorization_required');
    const scope = { account_id: ACCOUNT, environment: 'live', service: TOOL };
    expect(await db().collection('connections').countDocuments(scope)).toBeGreaterThan(0);
    expect(await db().collection('pending_authorizations').countDocuments(scope)).toBeGreaterThan(0);
    const stats0 = await acme.stats();

    expect(await unregister()).toEqual({ ok: true });
    expect(
      await db()
        .collection('custom_providers')
        .countDocuments({ _id: `${ACCOUNT}:live:${TOOL}` as never }),
    ).toBe(0);
    expect(await db().collection('connections').countDocuments(scope)).toBe(0);
    expect(await db().collection('pending_authorizations').countDocuments(scope)).toBe(0);
    expect(await acme.stats()).toEqual(stats0);
    // The deployment's connections of the same account and environment stay.
    expect((await docOf('c-dave', 'github'))?.status).toBe('connected');

    expect(await ask('c-erin')).toEqual(noProvider);
    expect((await h.list('c-erin')).connections).toEqual([]);
    expect((await fetch(pending.auth_url as string, { redirect: 'manual' })).status).toBe(410);
    // Idempotent.
    expect(await unregister()).toEqual({ ok: true });
    expect(await unregister({ service: 'never_registered' })).toEqual({ ok: true });

    // Registered again, it starts from scratch: the user is asked for consent again.
    expect(await register()).toEqual({ ok: true });
    expect((await ask('c-erin')).status).toBe('authorization_required');
  });

  it('refuses (issue 20, finding 1) token, revocation and authorize URLs off a public https host, unless OUTBOUND_ALLOW_PRIVATE', async () => {
    const strict = { ...h.deps, oauth: new OAuthClient(1000) };
    const cases: [Partial<ProviderRegister>, string][] = [
      [{ token_url: 'http://127.0.0.1:8080/metrics' }, 'oauth.token_url refused: 127.0.0.1 is a loopback address'],
      [{ token_url: 'https://localhost:8080/metrics' }, 'oauth.token_url refused: localhost resolves to a loopback address'],
      [{ token_url: 'http://token.example.com/token' }, 'oauth.token_url refused: only https is allowed'],
      [
        { revocation_url: 'https://[::ffff:169.254.169.254]/revoke' },
        'oauth.revocation_url refused: ::ffff:a9fe:a9fe is a linkLocal address',
      ],
      [{ authorize_url: 'https://10.0.0.8/auth' }, 'oauth.authorize_url refused: 10.0.0.8 is a private address'],
      [{ authorize_url: 'http://auth.example.com/auth', environment: 'test' }, 'oauth.authorize_url refused: only https is allowed'],
      [{ token_url: 'https://user:pw@token.example.com/token' }, 'oauth.token_url refused: credentials in the URL are not allowed'],
    ];
    const { revocation_url: _none, ...base } = registration({ service: 'ssrf_tool' });
    const publicUrls = { authorize_url: 'https://auth.example.com/auth', token_url: 'https://93.184.215.14/token' };
    for (const [o, message] of cases) {
      const input: ProviderRegister = { ...base, ...publicUrls, ...o };
      expect(await registerProvider(input, strict)).toEqual({ ok: false, error: { code: 'invalid_request', message } });
    }
    expect(await registerProvider({ ...base, ...publicUrls }, strict)).toEqual({ ok: true });
    // The harness runs with the development setting on: its authorization server is on loopback.
    expect(await register({ service: 'dev_tool' })).toEqual({ ok: true });
  });

  it('keeps a provider to its account and environment', async () => {
    const ISO = 'iso_tool';
    expect(await register({ service: ISO, environment: 'live' })).toEqual({ ok: true });
    const mine = await ask('i-ann', { service: ISO, environment: 'live' });
    expect(mine.status).toBe('authorization_required');
    expect(await ask('i-ann', { service: ISO, environment: 'test' })).toEqual(noProvider);
    expect(await ask('i-ann', { service: ISO, environment: 'live', account_id: 'acct_other' })).toEqual(noProvider);

    expect((await consent(new Browser(), mine.auth_url as string)).text).toContain('Connected');
    expect((await ask('i-ann', { service: ISO, environment: 'live' })).status).toBe('ok');

    // Deleting the name elsewhere does not touch it.
    expect(await unregister({ service: ISO, environment: 'test' })).toEqual({ ok: true });
    expect(await unregister({ service: ISO, environment: 'live', account_id: 'acct_other' })).toEqual({ ok: true });
    expect((await ask('i-ann', { service: ISO, environment: 'live' })).status).toBe('ok');

    // Another account registers the same name with its own client: each account gets its own.
    expect(
      await register({
        service: ISO,
        environment: 'live',
        account_id: 'acct_other',
        client_id: 'other-client',
        authorize_url: 'https://auth.other.example/authorize',
      }),
    ).toEqual({ ok: true });
    const theirs = await ask('i-ann', { service: ISO, environment: 'live', account_id: 'acct_other' });
    expect(theirs.status).toBe('authorization_required');
    const loc = await authorizeRequest(theirs.auth_url as string);
    expect(`${loc.origin}${loc.pathname}`).toBe('https://auth.other.example/authorize');
    expect(loc.searchParams.get('client_id')).toBe('other-client');
    const again = await ask('i-ann', { service: ISO, environment: 'live' });
    expect(again.status).toBe('ok');
    expect(
      await db()
        .collection('connections')
        .countDocuments({ _id: idOf('i-ann', ISO, 'live', 'acct_other') as never }),
    ).toBe(0);
  });
});
