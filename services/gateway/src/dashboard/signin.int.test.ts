import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Connection } from 'mongoose';
import type { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes } from '@tes/store';
import { MONGO_URL, memoryLogger, uniqueName } from '@tes/testing';
import { AccountRepository } from '../store/account.repository.js';
import type { TaskViewReader } from '../domain/task-view.js';
import { createDashboard, dashboardOptions } from './index.js';
import { hashPassword } from './password.js';

/**
 * Issue 20, finding 6, against the real database: the lock-out counts per email and client
 * address (the owner's own address is not locked by an attacker's failures), and a signed-out
 * session cookie is refused. The dashboard trusts 127.0.0.1 as a proxy here, so each request
 * names its client address in X-Forwarded-For, as a TLS-terminating proxy would.
 */
describe('dashboard sign-in and sessions (real database)', () => {
  const { logger } = memoryLogger('gateway');
  const dbName = uniqueName('gw_signin');
  const PASSWORD = 'correct horse battery staple';
  const EMAIL = 'owner@acme.test';
  const OWNER = '203.0.113.10';
  let conn: Connection;
  let options: ReturnType<typeof dashboardOptions>;
  let server: http.Server;
  let base = '';

  beforeAll(async () => {
    conn = await connectMongo({ url: MONGO_URL, dbName, logger });
    const accounts = new AccountRepository(conn);
    options = dashboardOptions(conn, logger, ['127.0.0.1'], {
      DASHBOARD_SESSION_SECRET: 'int-test-session-secret-0123456789abcdef',
      NODE_ENV: 'test',
    });
    await ensureIndexes(conn);
    await accounts.accounts.collection.insertOne({
      _id: 'acct_s',
      name: 'Acme',
      plan: 'prototyping',
      status: 'active',
      created_at: new Date(),
    } as never);
    await options.owners.create('acct_s', EMAIL, await hashPassword(PASSWORD, { log2N: 10, r: 8, p: 1 }));
    const app = express();
    app.use(
      '/dashboard',
      createDashboard({ broker: {} as Broker, accounts, views: {} as TaskViewReader, logger, requestTimeoutMs: 1000 }, options),
    );
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dashboard`;
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await conn.dropDatabase();
    await conn.close();
  });

  const cookiesOf = (res: Response) => res.headers.getSetCookie().map((c) => c.split(';')[0]!);
  const csrfOf = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  const get = (path: string, from: string, cookie = '') =>
    fetch(`${base}${path}`, { redirect: 'manual', headers: { 'x-forwarded-for': from, ...(cookie ? { cookie } : {}) } });
  const post = (path: string, from: string, form: Record<string, string>, cookie = '') =>
    fetch(`${base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from, ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(form).toString(),
    });

  async function signIn(from: string, email: string, password: string): Promise<{ status: number; cookie: string; text: string }> {
    const form = await get('/sign-in', from);
    const pre = cookiesOf(form).join('; ');
    const res = await post('/sign-in', from, { _csrf: csrfOf(await form.text()), email, password }, pre);
    const session = cookiesOf(res).find((c) => c.startsWith('__Host-tes_session=')) ?? '';
    return { status: res.status, cookie: session, text: await res.text() };
  }

  it('locks an email for the address that failed, not for the owner at another address', async () => {
    const ATTACKER = '198.51.100.66';
    for (let i = 1; i <= 5; i++) expect((await signIn(ATTACKER, EMAIL, `wrong password ${i}`)).status).toBe(401);
    const locked = await signIn(ATTACKER, EMAIL, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.text).toContain('Too many failed sign-ins for this email.');
    // The owner, from their own address, signs in (slowed by the back-off, not refused).
    const started = Date.now();
    const owner = await signIn(OWNER, EMAIL, PASSWORD);
    expect(owner.status).toBe(303);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    // ...and that does not lift the attacker's lock.
    expect((await signIn(ATTACKER, EMAIL, PASSWORD)).status).toBe(429);
    expect(await options.owners.failures.countDocuments({ address: ATTACKER })).toBe(5);
  }, 30_000);

  it('locks an address that fails for many emails (spraying), for every email', async () => {
    const SPRAYER = '192.0.2.99';
    for (let i = 1; i <= 20; i++) expect((await signIn(SPRAYER, `user${i}@acme.test`, 'some password')).status).toBe(401);
    const r = await signIn(SPRAYER, 'user21@acme.test', 'some password');
    expect(r.status).toBe(429);
    expect(r.text).toContain('Too many failed sign-ins from your network.');
  }, 60_000);

  it('refuses a signed-out session cookie, even a copy of it', async () => {
    const { cookie } = await signIn(OWNER, EMAIL, PASSWORD);
    const page = await get('/keys', OWNER, cookie);
    expect(page.status).toBe(200);
    const csrf = csrfOf(await page.text());
    const sid = JSON.parse(Buffer.from(cookie.split('=')[1]!.split('.')[1]!, 'base64url').toString()).sid as string;
    expect(await options.sessions.sessions.countDocuments({ _id: sid })).toBe(1);
    const out = await post('/sign-out', OWNER, { _csrf: csrf }, cookie);
    expect(out.status).toBe(303);
    expect(await options.sessions.sessions.countDocuments({ _id: sid })).toBe(0);
    // The browser dropped it; a copy kept elsewhere is refused.
    const again = await get('/keys', OWNER, cookie);
    expect([again.status, again.headers.get('location')]).toEqual([303, '/dashboard/sign-in']);
    expect((await post('/keys', OWNER, { _csrf: csrf, environment: 'test' }, cookie)).status).toBe(401);
  }, 30_000);
});
