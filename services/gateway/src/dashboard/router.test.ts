import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Broker } from '@tes/messaging';
import { memoryLogger } from '@tes/testing';
import type { AccountStore } from '../domain/account.js';
import type { TaskViewReader } from '../domain/task-view.js';
import { createDashboard } from './index.js';
import type { Owner } from './owner.js';
import { hashPassword } from './password.js';
import type { OwnerStore, SessionStore, UsageStats } from './ports.js';

/**
 * The dashboard in process with stand-ins for its stores (the browser suites in test/e2e run
 * it for real): headers, the session gate, CSRF on every POST, sign-in refusals and lock-out,
 * escaping. Plain HTTP here: cookies are sent by hand.
 */
describe('dashboard router', () => {
  const { logger } = memoryLogger('gateway');
  const PASSWORD = 'correct horse battery staple';
  let owner: Owner;
  const failures: { email: string; address: string; at: Date }[] = [];
  const owners = {
    byEmail: async (email: string) => (email.trim().toLowerCase() === owner.email ? owner : null),
    byId: async (id: string) => (id === owner._id ? owner : null),
    recentFailures: async (email: string, address: string) => {
      const times = (f: (x: (typeof failures)[number]) => boolean) =>
        failures
          .filter(f)
          .map((x) => x.at)
          .reverse();
      return {
        pair: times((f) => f.email === email.toLowerCase() && f.address === address),
        address: times((f) => f.address === address),
        emailCount: times((f) => f.email === email.toLowerCase()).length,
      };
    },
    recordFailure: async (email: string, address: string, at: Date) => void failures.push({ email: email.toLowerCase(), address, at }),
    clearFailures: async (email: string, address: string) =>
      void failures.splice(0, failures.length, ...failures.filter((f) => f.email !== email || f.address !== address)),
  } as unknown as OwnerStore;
  const live = new Set<string>();
  const sessions = {
    create: async (sid: string) => void live.add(sid),
    isActive: async (sid: string) => live.has(sid),
    revoke: async (sid: string) => void live.delete(sid),
  } as unknown as SessionStore;
  const accounts = {
    account: async () => ({
      _id: 'acct_1',
      name: 'Acme <script>alert(1)</script>',
      plan: 'prototyping',
      status: 'active',
      created_at: new Date(),
    }),
  } as unknown as AccountStore;
  const usage = {
    requestsThisMinute: async () => 7,
    taskCounts: async () => ({ running: 2, pending: 1, waiting: 0 }),
  } as unknown as UsageStats;
  let server: http.Server;
  let base = '';

  beforeAll(async () => {
    owner = {
      _id: 'own_1',
      account_id: 'acct_1',
      email: 'owner@acme.test',
      password_hash: await hashPassword(PASSWORD, { log2N: 10, r: 8, p: 1 }),
      created_at: new Date(),
    };
    const app = express();
    app.set('query parser', 'simple');
    app.use(
      '/dashboard',
      createDashboard(
        { broker: {} as Broker, accounts, views: {} as TaskViewReader, logger, requestTimeoutMs: 1000 },
        { owners, usage, sessions, sessionSecret: 'unit-test-session-secret-0123456789abcdef', trustedProxies: [] },
      ),
    );
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dashboard`;
  });

  afterAll(async () => new Promise<void>((r) => server.close(() => r())));

  const get = (path: string, cookie = '') => fetch(`${base}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const post = (path: string, form: Record<string, string>, cookie = '') =>
    fetch(`${base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(form).toString(),
    });
  const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0]!);
  const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

  async function signInForm(): Promise<{ cookie: string; csrf: string }> {
    const res = await get('/sign-in');
    return { cookie: cookiesOf(res).join('; '), csrf: csrfOf(await res.text()) };
  }

  async function signedIn(): Promise<{ cookie: string; csrf: string }> {
    const form = await signInForm();
    const res = await post('/sign-in', { _csrf: form.csrf, email: 'Owner@Acme.test ', password: PASSWORD }, form.cookie);
    expect(res.status).toBe(303);
    const cookie = cookiesOf(res).find((c) => c.startsWith('__Host-tes_session='))!;
    const page = await (await get('/usage', cookie)).text();
    return { cookie, csrf: csrfOf(page) };
  }

  it('serves pages with a strict CSP, no framing, no caching, and its one stylesheet', async () => {
    const res = await get('/sign-in');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
    );
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const page = await res.text();
    expect(page).not.toMatch(/<script|style=|https?:\/\/(?!127)/);
    const css = /href="(\/dashboard\/assets\/dashboard\.css\?v=[0-9a-f]+)"/.exec(page)?.[1] ?? '';
    const sheet = await fetch(`${base.replace('/dashboard', '')}${css}`);
    expect([sheet.status, sheet.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
    expect(sheet.headers.get('cache-control')).toContain('immutable');
    expect(await sheet.text()).not.toMatch(/@import|url\(/);
  });

  it('sends visitors without a session to sign-in, and refuses their POSTs', async () => {
    const res = await get('/usage');
    expect([res.status, res.headers.get('location')]).toEqual([303, '/dashboard/sign-in']);
    const forged = await get('/usage', '__Host-tes_session=eyJhbGciOiJub25lIn0.e30.');
    expect(forged.status).toBe(303);
    expect((await post('/keys', { environment: 'test' })).status).toBe(401);
  });

  it('refuses a sign-in without its form token (login CSRF)', async () => {
    const form = await signInForm();
    expect((await post('/sign-in', { email: owner.email, password: PASSWORD }, form.cookie)).status).toBe(403);
    expect((await post('/sign-in', { _csrf: form.csrf, email: owner.email, password: PASSWORD })).status).toBe(403);
  });

  it('signs in with a __Host- session cookie: HttpOnly, Secure, SameSite=Strict', async () => {
    const form = await signInForm();
    const res = await post('/sign-in', { _csrf: form.csrf, email: owner.email, password: PASSWORD }, form.cookie);
    expect([res.status, res.headers.get('location')]).toEqual([303, '/dashboard/keys']);
    const set = res.headers.getSetCookie().find((c) => c.startsWith('__Host-tes_session='));
    expect(set).toMatch(/; Max-Age=28800; Path=\/; HttpOnly; Secure; SameSite=Strict$/);
  });

  it('requires the session’s CSRF token on every POST', async () => {
    const { cookie, csrf } = await signedIn();
    expect(csrf).not.toBe('');
    expect((await post('/sign-out', {}, cookie)).status).toBe(403);
    // Resend now too: refused before the dispatcher is asked; with the token, a malformed event id is a 404 page.
    expect((await post('/webhooks/resend', { event_id: 'evt_1' }, cookie)).status).toBe(403);
    expect((await post('/webhooks/resend', { _csrf: csrf, event_id: 'not-an-event' }, cookie)).status).toBe(404);
    expect((await get('/webhooks/events/not-an-event', cookie)).status).toBe(404);
    expect((await post('/sign-out', { _csrf: `${csrf.startsWith('A') ? 'B' : 'A'}${csrf.slice(1)}` }, cookie)).status).toBe(403);
    // A token of another session does not do.
    const other = await signedIn();
    expect((await post('/sign-out', { _csrf: other.csrf }, cookie)).status).toBe(403);
    const out = await post('/sign-out', { _csrf: csrf }, cookie);
    expect([out.status, out.headers.get('location')]).toEqual([303, '/dashboard/sign-in?done=signed_out']);
    expect(out.headers.getSetCookie()[0]).toMatch(/^__Host-tes_session=; Max-Age=0/);
  });

  it('escapes what it shows, and shows usage against the plan', async () => {
    const { cookie } = await signedIn();
    const page = await (await get('/usage', cookie)).text();
    expect(page).toContain('Acme &lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script>');
    expect(page).toMatch(/7 <small>\/ 100<\/small>/);
    expect(page).toMatch(/2 <small>\/ 10<\/small>/);
  });

  it('answers unknown pages with an HTML 404, never the API’s JSON', async () => {
    const { cookie } = await signedIn();
    const res = await get('/nope', cookie);
    expect([res.status, res.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    expect(await res.text()).toContain('Page not found');
  });

  it('refuses a wrong password or an unknown email alike, then locks the email after 5 failures', async () => {
    const attempt = async (email: string, password: string) => {
      const form = await signInForm();
      const res = await post('/sign-in', { _csrf: form.csrf, email, password }, form.cookie);
      return { status: res.status, text: await res.text() };
    };
    const unknown = await attempt('nobody@acme.test', PASSWORD);
    const wrong = await attempt(owner.email, 'wrong password 1');
    expect([unknown.status, wrong.status]).toEqual([401, 401]);
    expect(unknown.text).toContain('Email or password is incorrect.');
    expect(wrong.text).toContain('Email or password is incorrect.');
    for (let i = 2; i <= 4; i++) expect((await attempt(owner.email, `wrong password ${i}`)).status).toBe(401);
    const fifth = await attempt(owner.email, 'wrong password 5');
    expect(fifth.text).toMatch(/locked for 15 minutes/);
    const locked = await attempt(owner.email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.text).toContain('Too many failed sign-ins for this email.');
    failures.length = 0;
  }, 20_000);
});
