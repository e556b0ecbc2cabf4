import { Broker } from '@tes/messaging';
import { AMQP_URL, freePort, memoryLogger, request, startStack, waitFor, type Stack } from '@tes/testing';
import { startAuthServer, type AuthServer } from '../../services/oauth-vault/test/auth-server.js';
import { Browser as ConsentBrowser, consent } from '../../services/oauth-vault/test/browser.js';
import { SESSION_SECRET, dashboardUrl, launchBrowser, newAccount, newOwner, shot, signIn, type Browser } from './dashboard.support.js';

/**
 * The dashboard's Connections page with a real connection: the oauth-vault is configured with
 * a real OAuth 2.0 authorization server (oidc-provider) as `github`, an end user consents
 * through its pages, and the owner finds the user and revokes the connection in Chromium.
 */
describe('dashboard connections (browser)', () => {
  const USER = 'user_conn_dash';
  const EMAIL = 'owner@conn.test';
  const PASSWORD = 'a long enough password';
  let auth: AuthServer;
  let stack: Stack;
  let browser: Browser;
  let client: Broker;
  let accountId = '';
  let liveKey = '';
  let taskId = '';
  let token = '';
  const page = () => browser.page;
  const url = (p: string) => dashboardUrl(stack, p);
  const credential = async () =>
    await client.request(
      'credential.get',
      { account_id: accountId, environment: 'live', user_id: USER, service: 'github', scopes: ['repo'], task_id: taskId },
      { timeoutMs: 10_000 },
    );

  beforeAll(async () => {
    const publicPort = await freePort();
    const publicUrl = `http://127.0.0.1:${publicPort}`;
    auth = await startAuthServer({ redirectUri: `${publicUrl}/oauth/callback` });
    [stack, browser] = await Promise.all([
      startStack({
        // The page needs no webhook-dispatcher.
        only: ['gateway', 'task-orchestrator', 'executor', 'oauth-vault'],
        env: {
          gateway: { DASHBOARD_SESSION_SECRET: SESSION_SECRET },
          'oauth-vault': { ...auth.providerEnv('github'), PUBLIC_PORT: String(publicPort), PUBLIC_BASE_URL: publicUrl },
        },
      }),
      launchBrowser(),
    ]);
    const acct = await newAccount(stack, 'Connections Inc');
    accountId = acct.account_id;
    liveKey = acct.api_keys.live;
    newOwner(stack, accountId, EMAIL, PASSWORD);
    client = new Broker({ url: AMQP_URL, source: 'e2e', logger: memoryLogger().logger, namespace: stack.namespace });
    await client.connect();
  }, 90_000);

  afterAll(async () => {
    await client?.close(1000);
    await browser?.close();
    await stack?.stopAll();
    await auth?.close();
  });

  it('an end user connects github through the consent pages (a live task waits for it)', async () => {
    const created = await request('POST', `${stack.baseUrl}/tasks`, {
      headers: { authorization: `Bearer ${liveKey}` },
      body: { prompt: 'List the latest issues of the github repo octo/hello', user_id: USER },
    });
    expect(created.status).toBe(201);
    taskId = created.json.id as string;
    await waitFor(
      async () => {
        const t = await request('GET', `${stack.baseUrl}/tasks/${taskId}`, { headers: { authorization: `Bearer ${liveKey}` } });
        return t.json?.status === 'waiting' || undefined;
      },
      { what: 'task waiting' },
    );
    // The owner's task page shows what it waits for, with a fresh consent link for that user.
    expect(await signIn(page(), stack, EMAIL, PASSWORD)).toBe(303);
    await page().goto(url(`/tasks/${taskId}?env=live`));
    const waiting = (await page().getByTestId('waiting').textContent()) ?? '';
    expect(waiting).toContain('Waiting for consent');
    expect(waiting).toContain('oauth_consent_required');
    expect(waiting).toContain(USER);
    const authUrl = ((await page().getByTestId('auth-url').textContent()) ?? '').trim();
    expect(authUrl).toContain('/oauth/consent/');
    // That link works: the end user goes through the vault's page and the provider's consent.
    const done = await consent(new ConsentBrowser(), authUrl);
    expect(done.status).toBe(200);
    const ok = await waitFor(
      async () => {
        const c = await credential();
        return c.status === 'ok' ? c : undefined;
      },
      { what: 'connection usable' },
    );
    token = ok.access_token ?? '';
    expect(await auth.apiStatus(token)).toBe(200);
  });

  it('shows the end user (from recent tasks) and the connected service, never a token', async () => {
    // Signed in by the test above.
    await page().goto(url('/connections?env=test'));
    await expect(page().getByText('No test task has named an end user yet').count()).resolves.toBe(1);
    await page().getByRole('link', { name: 'Live' }).click();
    expect(page().url()).toBe(url('/connections?env=live'));
    await page().getByRole('link', { name: USER }).click();
    const row = page().locator('tr[data-service="github"]');
    await expect(row.textContent()).resolves.toContain('connected');
    await expect(row.textContent()).resolves.toContain('repo');
    expect(await page().content()).not.toContain(token);
    await shot(page(), 'dashboard-connections');

    // The search box finds users too; an unknown one has an empty state.
    await page().fill('#user_id', 'user_nobody');
    await page().getByRole('button', { name: 'Show connections' }).click();
    await expect(page().getByText('No connected service').count()).resolves.toBe(1);
  });

  it('revokes the connection: revoked at the provider, shown as revoked, the next credential needs consent again', async () => {
    await page().goto(url(`/connections?env=live&user_id=${USER}`));
    const row = page().locator('tr[data-service="github"]');
    await row.getByText('Revoke…').click();
    await row.getByRole('button', { name: 'Revoke connection' }).click();
    await expect(page().getByRole('status').textContent()).resolves.toContain('Connection revoked');
    expect(page().url()).toBe(url(`/connections?env=live&user_id=${USER}&done=connection_revoked`));
    await waitFor(async () => (await auth.apiStatus(token)) === 401, { what: 'token revoked at the provider' });
    const after =
      (await page().locator('tr[data-service="github"]').count()) === 0
        ? ''
        : await page().locator('tr[data-service="github"]').textContent();
    expect(after ?? '').not.toContain('connected');
    expect((await credential()).status).toBe('authorization_required');
    // Revoking again: nothing to revoke, said plainly.
    const csrf = await page().locator('input[name=_csrf]').first().inputValue();
    const again = await page().request.post(url('/connections/revoke'), {
      form: { _csrf: csrf, env: 'live', user_id: USER, service: 'slack' },
      maxRedirects: 0,
    });
    expect(again.status()).toBe(404);
    expect(await again.text()).toContain('has no slack connection');
  });
});
