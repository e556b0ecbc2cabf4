import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT, waitFor } from '@tes/testing';
import { Browser, consent, continueConsent } from '../test/browser.js';
import { ACCOUNT, SERVICE, startHarness, type Harness } from '../test/harness.js';
import { aadOf } from './domain/connection-docs.js';
import { connectionIdOf, type ConnectionDoc } from './domain/connection.js';

/** Revocation through the internal API and through the hosted settings page. */
describe('revocation', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      // A second provider whose revocation endpoint is down: the tokens must go all the same.
      envFrom: (auth) => ({
        OAUTH_CUSTOM_PROVIDERS: 'crm',
        ...auth.providerEnv('crm', { CRM_REVOCATION_URL: 'http://127.0.0.1:9/revoke' }),
      }),
    });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  const docOf = async (user: string, service = SERVICE) =>
    (await h.mongo.db!.collection('connections').findOne({
      _id: connectionIdOf({ account_id: ACCOUNT, environment: 'live', user_id: user, service }) as never,
    })) as unknown as ConnectionDoc;
  const connect = async (user: string, service = SERVICE, browser = new Browser()) => {
    const reply = await h.credential({ user_id: user, service, scopes: ['repo'] });
    const page = await consent(browser, reply.auth_url as string);
    expect(page.text).toContain('Connected');
    return docOf(user, service);
  };
  const settingsLink = (user: string, ttl = 600) => {
    const res = spawnSync(
      process.execPath,
      [
        path.join(REPO_ROOT, 'services/oauth-vault/dist/cli.js'),
        'settings-link',
        '--account',
        ACCOUNT,
        '--env',
        'live',
        '--user',
        user,
        '--ttl',
        String(ttl),
      ],
      { env: { ...process.env, VAULT_STATE_SECRET: h.stateSecret, PUBLIC_BASE_URL: h.baseUrl }, encoding: 'utf8' },
    );
    if (res.status !== 0) throw new Error(res.stderr);
    return JSON.parse(res.stdout) as { url: string; expires_at: string };
  };

  it('connection.revoke calls the provider, deletes the tokens, publishes revoked, and later asks for consent again', async () => {
    const doc = await connect('v-alice');
    const access = h.deps.ring.decrypt(doc.access_token_enc as string, aadOf(doc._id, 'access_token'));
    const refresh = h.deps.ring.decrypt(doc.refresh_token_enc as string, aadOf(doc._id, 'refresh_token'));
    expect(await h.auth.apiStatus(access)).toBe(200);

    expect(await h.revoke('v-alice')).toEqual({ ok: true });
    expect(await h.auth.revokedTokens()).toEqual(expect.arrayContaining([refresh]));
    expect(await h.auth.apiStatus(access)).toBe(401);
    expect(await docOf('v-alice')).toMatchObject({ status: 'revoked', access_token_enc: null, refresh_token_enc: null, key_id: null });
    const ev = await waitFor(() => h.changes.find((c) => c.user_id === 'v-alice' && c.outcome === 'revoked'), { what: 'revoked event' });
    expect(ev).toEqual({
      account_id: ACCOUNT,
      environment: 'live',
      user_id: 'v-alice',
      service: SERVICE,
      outcome: 'revoked',
      scopes: ['read:user', 'repo'],
    });
    expect((await h.list('v-alice')).connections).toEqual([expect.objectContaining({ service: SERVICE, status: 'revoked' })]);
    expect((await h.credential({ user_id: 'v-alice', scopes: ['repo'] })).status).toBe('authorization_required');

    expect(await h.revoke('v-alice')).toEqual({ ok: false, error: { code: 'connection_not_found', message: expect.any(String) } });
    expect(await h.revoke('v-nobody')).toEqual({ ok: false, error: { code: 'connection_not_found', message: expect.any(String) } });
  });

  it('deletes the tokens even when the provider revocation endpoint fails', async () => {
    await connect('v-bob', 'crm');
    expect(await h.revoke('v-bob', 'crm')).toEqual({ ok: true });
    expect(await docOf('v-bob', 'crm')).toMatchObject({ status: 'revoked', access_token_enc: null, refresh_token_enc: null });
    expect(h.logLines().some((l) => l.includes('revocation at the provider failed'))).toBe(true);
  });

  it('settings page: lists connections without tokens and revokes one with a CSRF-checked POST', async () => {
    const browser = new Browser();
    const gh = await connect('v-carol', SERVICE, browser);
    await connect('v-carol', 'crm', browser);
    const link = settingsLink('v-carol');
    expect(link.url.startsWith(`${h.baseUrl}/settings?token=`)).toBe(true);

    const page = await browser.get(link.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).toContain('Connected services');
    expect(page.text).toContain('GitHub');
    expect(page.text).toContain('crm');
    expect(page.text).not.toMatch(/<link|<script/i);
    expect(page.text).not.toContain(h.deps.ring.decrypt(gh.access_token_enc as string, aadOf(gh._id, 'access_token')));

    // Without the browser's CSRF cookie, or with a wrong CSRF token: refused.
    const stranger = new Browser();
    const ghForm = browser.formIndex(page, 'service', SERVICE);
    const forged = await stranger.submit(page, {}, ghForm);
    expect(forged.status).toBe(403);
    const wrong = await browser.submit(page, { csrf: 'x'.repeat(43) }, ghForm);
    expect(wrong.status).toBe(403);
    expect((await docOf('v-carol')).status).toBe('connected');

    const revocations0 = (await h.auth.stats()).revocations;
    const after = await browser.submit(page, {}, ghForm);
    expect(after.status).toBe(200);
    expect(after.url).toContain('revoked=github');
    expect(after.text).toContain('GitHub has been disconnected');
    expect(after.text).toMatch(/status revoked/);
    expect((await h.auth.stats()).revocations).toBeGreaterThan(revocations0);
    expect(await docOf('v-carol')).toMatchObject({ status: 'revoked', access_token_enc: null });
    expect((await docOf('v-carol', 'crm')).status).toBe('connected');
    await waitFor(() => h.changes.find((c) => c.user_id === 'v-carol' && c.outcome === 'revoked'), { what: 'revoked event' });

    // Reconnect from the settings page goes through consent again.
    const reconnected = await consent(browser, browser.link(after, /Reconnect/));
    expect(reconnected.text).toContain('Connected');
    expect((await docOf('v-carol')).status).toBe('connected');
  });

  it('settings page refuses expired, tampered and missing links', async () => {
    const b = new Browser();
    const link = settingsLink('v-dave', 1);
    await new Promise((r) => setTimeout(r, 2100));
    const expired = await b.get(link.url);
    expect(expired.status).toBe(401);
    expect(expired.text).toContain('expired');
    const fresh = settingsLink('v-dave');
    const tampered = await b.get(fresh.url.replace(/.{4}$/, 'AAAA'));
    expect(tampered.status).toBe(401);
    expect((await b.get(`${h.baseUrl}/settings`)).status).toBe(401);
    // A state token is no settings link (separate keys and audiences).
    const reply = await h.credential({ user_id: 'v-dave', scopes: ['repo'] });
    const start = await continueConsent(reply.auth_url as string);
    const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
    expect((await b.get(`${h.baseUrl}/settings?token=${state}`)).status).toBe(401);
  });
});
