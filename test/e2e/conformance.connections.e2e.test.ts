import { Broker } from '@tes/messaging';
import { AMQP_URL, freePort, memoryLogger, request, waitFor, type HttpResult, type Stack } from '@tes/testing';
import { startAuthServer, type AuthServer } from '../../services/oauth-vault/test/auth-server.js';
import { Browser, consent } from '../../services/oauth-vault/test/browser.js';
import { ISO_UTC, OpenApi, bearer, newAccount, startApiStack, type Account } from './conformance.support.js';

/**
 * The `waiting` state and the users' connections API (brief: revocation through the
 * API) with a real connection: the oauth-vault is configured with a real OAuth 2.0
 * authorization server (oidc-provider) as the `github` provider, and a user goes
 * through its consent pages as a browser does.
 */
describe('public API conformance: waiting tasks and users’ connections', () => {
  const USER = 'user_conn';
  let auth: AuthServer;
  let stack: Stack;
  let api: OpenApi;
  let acct: Account;
  let client: Broker;
  let taskId = '';
  let token = '';

  const live = () => bearer(acct.api_keys.live);
  const url = (p: string) => `${stack.baseUrl}${p}`;
  const getTask = async (id: string) =>
    api.check('GET', '/tasks/{task_id}', await request('GET', url(`/tasks/${id}`), { headers: live() }));
  const connections = async (user: string, headers = live()) =>
    api.check('GET', '/users/{user_id}/connections', await request('GET', url(`/users/${user}/connections`), { headers }));
  const revoke = async (user: string, service: string) =>
    api.check(
      'DELETE',
      '/users/{user_id}/connections/{service}',
      await request('DELETE', url(`/users/${user}/connections/${service}`), { headers: live() }),
    );
  const credential = async (user = USER, task = taskId) =>
    await client.request(
      'credential.get',
      { account_id: acct.account_id, environment: 'live', user_id: user, service: 'github', scopes: ['repo'], task_id: task },
      { timeoutMs: 10_000 },
    );

  const cancel = async (id: string) =>
    api.check('POST', '/tasks/{task_id}/cancel', await request('POST', url(`/tasks/${id}/cancel`), { headers: live() }));
  /** Creates a live github task for the user and waits until it is `waiting`. */
  const createWaiting = async (user: string): Promise<{ id: string; waiting: HttpResult }> => {
    const created = api.check(
      'POST',
      '/tasks',
      await request('POST', url('/tasks'), {
        headers: live(),
        body: { prompt: 'List the latest issues of the github repo octo/hello', user_id: user },
      }),
    );
    expect(created.status).toBe(201);
    expect(created.json.tool).toBe('github');
    const id = created.json.id as string;
    const waiting = await waitFor(
      async () => {
        const r = await getTask(id);
        return r.json?.status === 'waiting' ? r : undefined;
      },
      { what: `task ${id} waiting`, timeoutMs: 20_000 },
    );
    return { id, waiting };
  };

  beforeAll(async () => {
    const publicPort = await freePort();
    const publicUrl = `http://127.0.0.1:${publicPort}`;
    auth = await startAuthServer({ redirectUri: `${publicUrl}/oauth/callback` });
    stack = await startApiStack({
      'oauth-vault': { ...auth.providerEnv('github'), PUBLIC_PORT: String(publicPort), PUBLIC_BASE_URL: publicUrl },
    });
    api = await OpenApi.fetch(stack);
    acct = await newAccount(stack, { rpm: 100_000 });
    client = new Broker({ url: AMQP_URL, source: 'conformance', logger: memoryLogger().logger, namespace: stack.namespace });
    await client.connect();
  }, 120_000);

  afterAll(async () => {
    await client?.close(1000);
    await stack?.stopAll();
    await auth?.close();
  });

  it('a live task that needs a user authorization is waiting: get shows the plain fields and `waiting`, list only the plain fields', async () => {
    const { id, waiting } = await createWaiting(USER);
    taskId = id;
    expect(Object.keys(waiting.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool', 'waiting']);
    expect(Object.keys(waiting.json.waiting).sort()).toEqual(['auth_url', 'message', 'reason', 'service']);
    expect(waiting.json.waiting).toMatchObject({ reason: 'oauth_consent_required', auth_url: expect.stringContaining('/oauth/consent/') });
    const items = api.check('GET', '/tasks', await request('GET', url(`/tasks?status=waiting&user_id=${USER}`), { headers: live() }));
    expect(items.json.data.map((t: { id: string }) => t.id)).toEqual([taskId]);
    expect(Object.keys(items.json.data[0]).sort()).toEqual(['created_at', 'id', 'status', 'tool']);
    expect((await connections(USER)).json).toEqual({ data: [], has_more: false });
  });

  it('after consent the task leaves waiting, and the connection is listed with service, scopes, status and connected_at, never a token', async () => {
    const pending = await credential();
    expect(pending.status).toBe('authorization_required');
    const page = await consent(new Browser(), pending.auth_url ?? '');
    expect(page.status).toBe(200);
    await waitFor(async () => (await getTask(taskId)).json?.status !== 'waiting', { what: 'task resumed', timeoutMs: 20_000 });
    const ok = await credential();
    expect(ok.status).toBe('ok');
    token = ok.access_token ?? '';
    expect(token).not.toBe('');

    const r = await connections(USER);
    expect(r.status).toBe(200);
    expect(r.json.has_more).toBe(false);
    expect(r.json.data).toHaveLength(1);
    const c = r.json.data[0] as Record<string, unknown>;
    expect(Object.keys(c).sort()).toEqual(['connected_at', 'scopes', 'service', 'status']);
    expect(c).toMatchObject({ service: 'github', status: 'connected' });
    expect(c['scopes']).toEqual(expect.arrayContaining(['repo']));
    expect(c['connected_at']).toMatch(ISO_UTC);
    expect(r.text).not.toContain(token);
    // The other environment of the same account has no connection.
    expect((await connections(USER, bearer(acct.api_keys.test))).json.data).toEqual([]);
  });

  it('POST settings_link gives the user a signed, expiring link to a page listing their connections, never a token', async () => {
    const r = api.check(
      'POST',
      '/users/{user_id}/settings_link',
      await request('POST', url(`/users/${USER}/settings_link`), { headers: live() }),
    );
    expect(r.status).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual(['expires_at', 'url']);
    expect(Date.parse(r.json.expires_at as string)).toBeGreaterThan(Date.now());
    const page = await request('GET', r.json.url as string);
    expect(page.status).toBe(200);
    expect(page.text).toContain('github');
    expect(page.text).not.toContain(token);
    const tampered = await request('GET', `${String(r.json.url).slice(0, -3)}abc`);
    expect(tampered.status).toBeGreaterThanOrEqual(400);
  });

  it('DELETE revokes the connection: 204 with no body, the token stops working at the provider, the user is no longer connected', async () => {
    const r: HttpResult = await revoke(USER, 'github');
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(r.headers['x-ratelimit-limit']).toBeDefined();
    await waitFor(async () => (await auth.apiStatus(token)) === 401, { what: 'token revoked at the provider' });
    const after = await connections(USER);
    expect(after.json.data.filter((c: { status: string }) => c.status === 'connected')).toEqual([]);
    expect((await credential()).status).toBe('authorization_required');
  });

  it('answers 404 connection_not_found for a service the user never connected', async () => {
    const r = await revoke(USER, 'slack');
    expect([r.status, r.json.error.code]).toEqual([404, 'connection_not_found']);
  });

  it('cancels a waiting task: 200 with exactly id, status cancelled and cancelled_at; it stays cancelled when the user connects', async () => {
    const user = 'user_cancel_waiting';
    // Two tasks wait for the same user's consent; one is cancelled, the other shows that consent resumes tasks.
    const cancelled = (await createWaiting(user)).id;
    const other = (await createWaiting(user)).id;

    const sentAt = Date.now();
    const r = await cancel(cancelled);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['cancelled_at', 'id', 'status']);
    expect(r.json).toMatchObject({ id: cancelled, status: 'cancelled' });
    expect(r.json.cancelled_at).toMatch(ISO_UTC);
    expect(Date.parse(r.json.cancelled_at as string)).toBeGreaterThanOrEqual(sentAt - 1000);
    expect(Date.parse(r.json.cancelled_at as string)).toBeLessThanOrEqual(Date.now() + 1000);
    const g = await getTask(cancelled);
    expect(g.json.status).toBe('cancelled');
    expect(Object.keys(g.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool']);
    const stillWaiting = api.check(
      'GET',
      '/tasks',
      await request('GET', url(`/tasks?status=waiting&user_id=${user}`), { headers: live() }),
    );
    expect(stillWaiting.json.data.map((t: { id: string }) => t.id)).toEqual([other]);
    const again = await cancel(cancelled);
    expect([again.status, again.json.error.code]).toEqual([409, 'task_already_complete']);

    // The user connects: the other task resumes, the cancelled one does not.
    const pending = await credential(user, other);
    expect(pending.status).toBe('authorization_required');
    expect((await consent(new Browser(), pending.auth_url ?? '')).status).toBe(200);
    await waitFor(async () => (await getTask(other)).json?.status !== 'waiting', { what: 'the other task resumed', timeoutMs: 20_000 });
    expect((await credential(user, other)).status).toBe('ok');
    expect((await getTask(cancelled)).json.status).toBe('cancelled');
    const trace = api.check('GET', '/tasks/{task_id}/trace', await request('GET', url(`/tasks/${cancelled}/trace`), { headers: live() }));
    expect(trace.json).toMatchObject({ task_id: cancelled, steps: [] });
  });
});
