import { createHmac } from 'node:crypto';
import { request, startReceiver, startStack, waitFor, type Stack } from '@tes/testing';
import {
  SESSION_SECRET,
  dashboardUrl,
  launchBrowser,
  newAccount,
  newOwner,
  reloadUntil,
  shot,
  signIn,
  type Browser,
} from './dashboard.support.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * The account owners' dashboard in a real browser (Debian's Chromium through playwright-core)
 * against the five services as real processes: sign-in, CSRF, API keys, webhooks with a real
 * receiver, tasks with their trace, usage, phone width.
 */
describe('dashboard (browser)', () => {
  const EMAIL = 'owner@acme.test';
  const PASSWORD = 'correct horse battery staple';
  let stack: Stack;
  let receiver: Receiver;
  let browser: Browser;
  let accountId = '';
  let originalTestKey = '';
  let activeKey = '';
  let taskId = '';
  const page = () => browser.page;
  const url = (p: string) => dashboardUrl(stack, p);
  const api = (method: string, p: string, key: string, body?: object) =>
    request(method, `${stack.baseUrl}${p}`, { headers: { authorization: `Bearer ${key}` }, ...(body ? { body } : {}) });

  beforeAll(async () => {
    receiver = await startReceiver();
    [stack, browser] = await Promise.all([
      startStack({
        env: {
          gateway: { DASHBOARD_SESSION_SECRET: SESSION_SECRET },
          // Retries 200 ms apart: an event becomes undeliverable in about a second.
          'webhook-dispatcher': { POLL_INTERVAL_MS: '100', WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200' },
        },
      }),
      launchBrowser(),
    ]);
    const acct = await newAccount(stack, 'Acme Robotics');
    accountId = acct.account_id;
    originalTestKey = acct.api_keys.test;
    newOwner(stack, accountId, EMAIL, PASSWORD);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stopAll();
    await receiver?.close();
  });

  it('sends signed-out visitors to sign-in, refuses a wrong password, and signs in with the keyboard', async () => {
    const first = await page().goto(url(''));
    expect(page().url()).toBe(url('/sign-in'));
    const headers = first?.headers() ?? {};
    expect(headers['content-security-policy']).toMatch(/^default-src 'self'/);
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['cache-control']).toBe('no-store');
    await expect(page().locator('h1').textContent()).resolves.toBe('Sign in');
    await shot(page(), 'dashboard-sign-in', { fullPage: false });

    expect(await signIn(page(), stack, EMAIL, 'not the password')).toBe(401);
    await expect(page().getByRole('alert').textContent()).resolves.toContain('Email or password is incorrect.');
    expect(page().url()).toBe(url('/sign-in'));
    expect((await browser.context.cookies()).some((c) => c.name === '__Host-tes_session')).toBe(false);

    expect(await signIn(page(), stack, EMAIL, PASSWORD)).toBe(303);
    expect(page().url()).toBe(url('/keys'));
    await expect(page().locator('h1').textContent()).resolves.toBe('API keys');
    const session = (await browser.context.cookies()).find((c) => c.name === '__Host-tes_session');
    expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    // The first Tab reaches the skip link.
    await page().keyboard.press('Tab');
    await expect(page().evaluate('document.activeElement && document.activeElement.textContent')).resolves.toBe('Skip to content');
  });

  it('refuses a state-changing POST without its CSRF token, or with another one', async () => {
    const before = await page().locator('tbody tr').count();
    const bare = await page().request.post(url('/keys'), { form: { environment: 'test' }, maxRedirects: 0 });
    expect(bare.status()).toBe(403);
    expect(await bare.text()).toContain('This form could not be verified');
    const forged = await page().request.post(url('/keys'), {
      form: { environment: 'test', _csrf: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    const signOut = await page().request.post(url('/sign-out'), { form: {}, maxRedirects: 0 });
    expect(signOut.status()).toBe(403);
    await page().reload();
    expect(await page().locator('tbody tr').count()).toBe(before);
  });

  it('creates a key shown once; it works against the API (201)', async () => {
    await page().goto(url('/keys?env=test'));
    await page().selectOption('#key-env', 'test');
    await page().getByRole('button', { name: 'Create key' }).click();
    const key = await page().getByTestId('new-key').inputValue();
    expect(key).toMatch(/^pk_test_[0-9A-Za-z]{32}$/);
    await expect(page().locator('tbody').first().textContent()).resolves.toContain(`pk_test_…${key.slice(-4)}`);
    const created = await api('POST', '/tasks', key, { prompt: 'Echo "hello from a dashboard key"' });
    expect(created.status).toBe(201);
    // Listed with prefix and last four only; the full key is in no later page.
    await page().goto(url('/keys'));
    expect(await page().content()).not.toContain(key);
    activeKey = key;
  });

  it('revokes the key: the very next API request answers 401', async () => {
    const row = page().locator('tr', { hasText: `pk_test_…${activeKey.slice(-4)}` });
    await row.getByText('Revoke', { exact: true }).click();
    await row.getByRole('button', { name: 'Revoke key' }).click();
    await expect(page().getByRole('status').textContent()).resolves.toContain('Key revoked');
    const r = await api('GET', '/tasks', activeKey);
    expect([r.status, r.json?.error?.code]).toEqual([401, 'invalid_api_key']);
    await expect(page().locator('section', { hasText: 'Revoked and expired keys' }).textContent()).resolves.toContain(
      `pk_test_…${activeKey.slice(-4)}`,
    );
  });

  it('rolls a key with the default expiry (now): a new one that works, the old one refused', async () => {
    expect((await api('GET', '/tasks', originalTestKey)).status).toBe(200);
    const row = page().locator('tr', { hasText: `pk_test_…${originalTestKey.slice(-4)}` });
    await row.getByText('Roll', { exact: true }).click();
    await row.getByRole('button', { name: 'Roll key' }).click();
    const fresh = await page().getByTestId('new-key').inputValue();
    expect(fresh).toMatch(/^pk_test_/);
    expect(fresh).not.toBe(originalTestKey);
    expect((await api('GET', '/tasks', originalTestKey)).status).toBe(401);
    expect((await api('GET', '/tasks', fresh)).status).toBe(200);
    activeKey = fresh;
  });

  it('sets the webhook endpoint, sends a test event and shows its delivery (200) in the log', async () => {
    await page().goto(url('/webhooks?env=test'));
    await page().fill('#url', receiver.url);
    await page().getByRole('button', { name: 'Save endpoint' }).click();
    await expect(page().getByRole('status').textContent()).resolves.toContain('Endpoint saved');
    await expect(page().inputValue('#url')).resolves.toBe(receiver.url);

    await page().getByRole('button', { name: 'Send test event' }).click();
    await expect(page().getByRole('status').textContent()).resolves.toContain('Test event sent');
    const received = await waitFor(() => receiver.received.find((r) => String(r.headers['webhook-id']).startsWith('evt_test_')), {
      what: 'the test delivery',
    });
    const eventId = String(received.headers['webhook-id']);
    expect(JSON.parse(received.rawBody)).toMatchObject({ event: 'task.progress', data: { step: 'test', tool: 'dashboard' } });

    const row = page().locator(`tr[data-event-id="${eventId}"]`);
    await reloadUntil(
      page(),
      url('/webhooks?env=test'),
      async () => (await row.count()) > 0 && (await row.textContent())!.includes('delivered'),
      'the delivered test event',
    );
    const text = ((await row.textContent()) ?? '').replace(/\s+/g, ' ');
    expect(text).toContain('task.progress');
    expect(text).toMatch(/#1 \d\d:\d\d:\d\d · 200 · \d+ ms/);

    // Reveal the secret: it signs what the receiver got.
    await page().getByRole('button', { name: 'Reveal secret' }).click();
    const secret = await page().getByTestId('webhook-secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(received.headers['x-service-signature']).toBe(createHmac('sha256', secret).update(received.rawBody).digest('hex'));
    await page().goto(url('/webhooks?env=test'));
    await shot(page(), 'dashboard-webhooks');

    // Rotate: a new secret, shown once.
    await page().getByText('Rotate secret…').click();
    await page().getByRole('button', { name: 'Rotate secret' }).click();
    await expect(page().getByRole('status').textContent()).resolves.toContain('Secret rotated (version 2)');
    expect(await page().getByTestId('webhook-secret').inputValue()).not.toBe(secret);
  });

  it('resends an undeliverable event from the delivery log: a new successful attempt, the same webhook-id', async () => {
    // The endpoint (set above) fails every attempt of a task's task.complete event.
    receiver.behave('fail');
    let id = '';
    try {
      const created = await api('POST', '/tasks', activeKey, { prompt: 'Echo "redeliver me"' });
      expect(created.status).toBe(201);
      id = created.json.id as string;
      await waitFor(() => receiver.received.filter((r) => JSON.parse(r.rawBody).task_id === id).length >= 5, {
        what: 'five failed attempts',
      });
    } finally {
      receiver.behave('ok');
    }
    const failed = receiver.received.filter((r) => JSON.parse(r.rawBody).task_id === id);
    const eventId = String(failed[0]?.headers['webhook-id']);
    expect(eventId).toMatch(/^evt_/);
    expect(failed.map((r) => r.headers['webhook-id'])).toEqual(Array(5).fill(eventId));
    expect(JSON.parse(failed[0]!.rawBody)).toMatchObject({ event: 'task.complete', task_id: id, data: { text: 'redeliver me' } });

    const row = page().locator(`tr[data-event-id="${eventId}"]`);
    const rowText = async () => ((await row.textContent()) ?? '').replace(/\s+/g, ' ');
    await reloadUntil(
      page(),
      url('/webhooks?env=test'),
      async () => (await row.count()) > 0 && (await rowText()).includes('undeliverable'),
      'the undeliverable event',
    );
    const before = await rowText();
    for (let n = 1; n <= 5; n++) expect(before).toMatch(new RegExp(`#${n} \\d\\d:\\d\\d:\\d\\d · 500 · \\d+ ms`));
    expect(before).not.toContain('#6');

    await row.getByRole('button', { name: `Resend now ${eventId}` }).click();
    // On to the event's inspector, which says what was done.
    expect(page().url()).toBe(url(`/webhooks/events/${eventId}?env=test&done=resent_scheduled`));
    await expect(page().getByRole('status').first().textContent()).resolves.toContain('Resend scheduled');
    const redelivered = await waitFor(() => receiver.received.filter((r) => r.headers['webhook-id'] === eventId)[5], {
      what: 'the redelivery',
    });
    // The same event again: same webhook-id (the receiver's dedup key), same body.
    expect(JSON.parse(redelivered.rawBody)).toEqual(JSON.parse(failed[0]!.rawBody));

    await reloadUntil(page(), url('/webhooks?env=test'), async () => (await rowText()).includes('delivered'), 'the redelivered event');
    const after = await rowText();
    expect(after).not.toContain('undeliverable');
    expect(after).toMatch(/#6 \d\d:\d\d:\d\d · 200 · \d+ ms/);
    for (let n = 1; n <= 5; n++) expect(after).toMatch(new RegExp(`#${n} \\d\\d:\\d\\d:\\d\\d · 500 · \\d+ ms`));
    // Nothing more was sent.
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === eventId)).toHaveLength(6);
  });

  it('explains a refused endpoint and keeps what was typed (live: https and public only)', async () => {
    // Plain http to a public host: refused in live whatever the stack allows for private development targets.
    await page().goto(url('/webhooks?env=live'));
    await page().fill('#url', 'http://hooks.example.com/hook');
    const [res] = await Promise.all([
      page().waitForResponse((r) => r.url().endsWith('/webhooks/endpoint')),
      page().getByRole('button', { name: 'Save endpoint' }).click(),
    ]);
    expect(res.status()).toBe(400);
    await expect(page().getByRole('alert').textContent()).resolves.toContain('webhook URL refused');
    await expect(page().inputValue('#url')).resolves.toBe('http://hooks.example.com/hook');
    await expect(page().locator('#log-h').textContent()).resolves.toBe('Delivery log');
    await expect(page().getByText('No deliveries yet').count()).resolves.toBe(1);
  });

  it('lists tasks with the filters, and opens one with its result and its trace as a timeline', async () => {
    const create = async (body: object) => {
      const r = await api('POST', '/tasks', activeKey, body);
      expect(r.status).toBe(201);
      return r.json.id as string;
    };
    taskId = await create({
      prompt: 'List the open issues in acme/api then post them to #eng',
      user_id: 'user_dash',
      metadata: { order: '7781' },
    });
    const failedId = await create({ prompt: 'Fetch http://169.254.169.254/latest/meta-data' });
    await waitFor(async () => (await api('GET', `/tasks/${taskId}`, activeKey)).json?.status === 'complete', { what: 'task complete' });
    await waitFor(async () => (await api('GET', `/tasks/${failedId}`, activeKey)).json?.status === 'failed', { what: 'task failed' });

    await page().goto(url('/tasks?env=test'));
    await expect(page().getByTestId('tasks').textContent()).resolves.toContain(taskId);
    await shot(page(), 'dashboard-tasks');
    await page().selectOption('#status', 'failed');
    await page().getByRole('button', { name: 'Filter' }).click();
    const failedRows = page().getByTestId('tasks').locator('tbody tr');
    await expect(failedRows.count()).resolves.toBe(1);
    await expect(failedRows.textContent()).resolves.toContain(failedId);
    await page().goto(url('/tasks?env=test&status=complete&user_id=user_dash'));
    await expect(page().getByTestId('tasks').locator('tbody tr').count()).resolves.toBe(1);
    await page().goto(url('/tasks?env=test&status=waiting'));
    await expect(page().getByText('No task matches these filters').count()).resolves.toBe(1);
    const bad = await page().goto(url('/tasks?env=test&limit=500'));
    expect(bad?.status()).toBe(400);
    await expect(page().getByRole('alert').textContent()).resolves.toContain('the page size must be from 1 to 100');
    // Live keys' tasks are another world.
    await page().goto(url('/tasks?env=live'));
    await expect(page().getByText('No live task yet').count()).resolves.toBe(1);

    await page().goto(url(`/tasks/${failedId}?env=test`));
    await expect(page().locator('section', { hasText: 'Error' }).first().textContent()).resolves.toContain('step_failed');

    await page().goto(url('/tasks?env=test'));
    await page().getByRole('link', { name: taskId }).click();
    expect(page().url()).toBe(url(`/tasks/${taskId}?env=test`));
    await expect(page().getByTestId('result').textContent()).resolves.toContain('"steps"');
    const trace = page().getByTestId('trace');
    await expect(trace.locator('tbody tr').count()).resolves.toBe(2);
    const traceText = (await trace.textContent()) ?? '';
    expect(traceText).toContain('github.list_issues');
    expect(traceText).toContain('slack.post_message');
    await expect(trace.locator('svg.span rect.fill').count()).resolves.toBe(2);
    await reloadUntil(
      page(),
      url(`/tasks/${taskId}?env=test`),
      async () => ((await page().locator('section', { hasText: 'Webhook deliveries' }).textContent()) ?? '').includes('delivered'),
      'task.complete delivered',
    );
    await shot(page(), 'dashboard-task');
    const missing = await page().goto(url('/tasks/task_doesnotexist?env=test'));
    expect(missing?.status()).toBe(404);
  });

  it('shows usage: requests this minute and running tasks against the plan', async () => {
    const window = Math.floor(Date.now() / 60_000);
    expect((await api('GET', '/tasks', activeKey)).status).toBe(200);
    await page().goto(url('/usage'));
    const requests = (await page().getByTestId('usage-requests').textContent()) ?? '';
    expect(requests).toMatch(/\/ 100/);
    const n = Number(/(\d+)\s*\/ 100/.exec(requests)?.[1]);
    if (Math.floor(Date.now() / 60_000) === window) expect(n).toBeGreaterThanOrEqual(1);
    await expect(page().getByTestId('usage-concurrency').textContent()).resolves.toMatch(/0\s*\/ 10/);
    await shot(page(), 'dashboard-usage');
  });

  it('is readable at phone width (no sideways scrolling)', async () => {
    await page().setViewportSize({ width: 390, height: 844 });
    for (const p of ['/keys', '/webhooks?env=test', `/tasks/${taskId}?env=test`, '/usage']) {
      await page().goto(url(p));
      const overflow = await page().evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect([p, overflow]).toEqual([p, 0]);
    }
    await page().goto(url('/webhooks?env=test'));
    await shot(page(), 'dashboard-phone');
    await page().setViewportSize({ width: 1280, height: 860 });
  });

  it('signs out; the old page then asks to sign in again', async () => {
    await page().goto(url('/keys'));
    await page().getByRole('button', { name: 'Sign out' }).click();
    expect(page().url()).toBe(url('/sign-in?done=signed_out'));
    await page().goto(url('/keys'));
    expect(page().url()).toBe(url('/sign-in'));
  });

  it('locks an email after 5 failed sign-ins in 15 minutes, even for the right password', async () => {
    const email = 'second@acme.test';
    newOwner(stack, accountId, email, 'another fine password');
    for (let i = 1; i <= 5; i++) expect(await signIn(page(), stack, email, `wrong password ${i}`)).toBe(401);
    await expect(page().getByRole('alert').textContent()).resolves.toMatch(/locked for (15|14) minutes/);
    expect(await signIn(page(), stack, email, 'another fine password')).toBe(429);
    await expect(page().getByRole('alert').textContent()).resolves.toContain('Too many failed sign-ins');
    // Other owners are not affected.
    expect(await signIn(page(), stack, EMAIL, PASSWORD)).toBe(303);
  });
});
