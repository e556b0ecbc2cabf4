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
 * Debugging from the dashboard, in a real browser (Debian's Chromium through playwright-core)
 * against the five services as real processes: the attempt inspector (the request as sent, the
 * receiver's answer), "Resend now" for an event that waits a minute for its retry, and the task
 * page's prompt, plan with step inputs (credentials masked) and where the task waits.
 */
describe('dashboard: attempt inspector, Resend now, task plan (browser)', () => {
  const EMAIL = 'owner@debug.test';
  const PASSWORD = 'a long and fine password';
  let stack: Stack;
  let receiver: Receiver;
  let browser: Browser;
  let testKey = '';
  let eventId = '';
  const page = () => browser.page;
  const url = (p: string) => dashboardUrl(stack, p);
  const api = (method: string, p: string, body?: object) =>
    request(method, `${stack.baseUrl}${p}`, { headers: { authorization: `Bearer ${testKey}` }, ...(body ? { body } : {}) });
  const create = async (body: object): Promise<string> => {
    const r = await api('POST', '/tasks', body);
    expect(r.status).toBe(201);
    return r.json.id as string;
  };
  const statusOf = async (id: string): Promise<string> => (await api('GET', `/tasks/${id}`)).json?.status as string;
  const text = async (testId: string) => ((await page().getByTestId(testId).first().textContent()) ?? '').replace(/\s+/g, ' ').trim();

  beforeAll(async () => {
    receiver = await startReceiver();
    [stack, browser] = await Promise.all([
      startStack({
        env: {
          gateway: { DASHBOARD_SESSION_SECRET: SESSION_SECRET },
          // A failed attempt is retried only a minute later: what Resend now is for.
          'webhook-dispatcher': { POLL_INTERVAL_MS: '100', WEBHOOK_RETRY_SCHEDULE_MS: '60000,60000,60000,60000' },
          // A task on a user's GitHub waits for the user's consent (no sandbox connection made for it).
          executor: { SANDBOX_AUTO_CONNECT: 'false' },
        },
      }),
      launchBrowser(),
    ]);
    const acct = await newAccount(stack, 'Debug Corp');
    testKey = acct.api_keys.test;
    newOwner(stack, acct.account_id, EMAIL, PASSWORD);
    expect(await signIn(page(), stack, EMAIL, PASSWORD)).toBe(303);
    await page().goto(url('/webhooks?env=test'));
    await page().fill('#url', receiver.url);
    await page().getByRole('button', { name: 'Save endpoint' }).click();
    await expect(page().getByRole('status').textContent()).resolves.toContain('Endpoint saved');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stopAll();
    await receiver?.close();
  });

  it("inspects a failing attempt: the request's headers and exact body as sent, and the receiver's answer", async () => {
    receiver.behave('fail');
    const taskId = await create({ prompt: 'Echo "inspect me"' });
    const got = await waitFor(() => receiver.received.find((r) => JSON.parse(r.rawBody).task_id === taskId), {
      what: 'the first attempt',
      timeoutMs: 20_000,
    });
    eventId = String(got.headers['webhook-id']);
    expect(JSON.parse(got.rawBody)).toMatchObject({ event: 'task.complete', task_id: taskId });

    const row = page().locator(`tr[data-event-id="${eventId}"]`);
    await reloadUntil(
      page(),
      url('/webhooks?env=test'),
      async () => (await row.count()) > 0 && ((await row.textContent()) ?? '').includes('#1'),
      'the failed attempt in the log',
    );
    await row.getByRole('link', { name: `Inspect ${eventId}` }).click();
    expect(page().url()).toBe(url(`/webhooks/events/${eventId}?env=test`));

    // The body shown is byte for byte what the receiver got.
    await expect(page().getByTestId('request-body').textContent()).resolves.toBe(got.rawBody);
    await expect(text('event-status')).resolves.toMatch(/^pending next attempt \d{4}-\d\d-\d\d/);
    const attempt = page().locator('details.attempt[data-attempt="1"]');
    await expect(attempt.getAttribute('open')).resolves.not.toBeNull();
    const headers = attempt.getByTestId('request-headers');
    for (const name of ['x-service-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-length']) {
      const value = (
        await headers
          .locator('tr', { has: page().locator(`th code:text-is("${name}")`) })
          .locator('td')
          .textContent()
      )?.trim();
      expect([name, value]).toEqual([name, String(got.headers[name])]);
    }
    await expect(attempt.locator('summary').textContent()).resolves.toMatch(/#1 · .* · 500 · \d+ ms · HTTP 500/);
    await expect(attempt.getByTestId('response-body').textContent()).resolves.toBe('fail');
    await expect(attempt.textContent()).resolves.toContain(`POST ${receiver.url}`);
    // The signing secret itself is never on the page (the signatures are).
    await page().goto(url('/webhooks?env=test'));
    await page().getByRole('button', { name: 'Reveal secret' }).click();
    const secret = await page().getByTestId('webhook-secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page().goto(url(`/webhooks/events/${eventId}?env=test`));
    const html = await page().content();
    expect(html).not.toContain(secret);
    expect(html).not.toContain(secret.slice('whsec_'.length));
    await shot(page(), 'dashboard-delivery');
  });

  it('Resend now makes the next attempt at once instead of a minute later, with the same webhook-id and bytes', async () => {
    receiver.behave('ok');
    const first = receiver.received.filter((r) => r.headers['webhook-id'] === eventId);
    expect(first).toHaveLength(1);
    await page()
      .getByRole('button', { name: `Resend now ${eventId}` })
      .click();
    expect(page().url()).toBe(url(`/webhooks/events/${eventId}?env=test&done=resent_due_now`));
    await expect(page().getByRole('status').first().textContent()).resolves.toContain('Resend scheduled');
    // Well before the retry's minute.
    const again = await waitFor(() => receiver.received.filter((r) => r.headers['webhook-id'] === eventId)[1], {
      what: 'the resent attempt',
      timeoutMs: 20_000,
    });
    expect(again.receivedAt - first[0]!.receivedAt).toBeLessThan(55_000);
    expect(again.rawBody).toBe(first[0]!.rawBody);

    await reloadUntil(
      page(),
      url(`/webhooks/events/${eventId}?env=test`),
      async () => (await text('event-status')).startsWith('delivered'),
      'delivered',
    );
    const second = page().locator('details.attempt[data-attempt="2"]');
    await expect(second.locator('summary').textContent()).resolves.toMatch(/#2 · .* · 200 · \d+ ms/);
    await expect(second.getByTestId('response-body').textContent()).resolves.toBe('ok');
    // Attempt 1 stays in the log, closed.
    await expect(page().locator('details.attempt[data-attempt="1"]').getAttribute('open')).resolves.toBeNull();
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === eventId)).toHaveLength(2);

    // Readable at phone width: long signatures and bodies wrap, nothing scrolls sideways.
    await page().setViewportSize({ width: 390, height: 844 });
    try {
      await page().goto(url(`/webhooks/events/${eventId}?env=test`));
      await expect(page().evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).resolves.toBe(0);
    } finally {
      await page().setViewportSize({ width: 1280, height: 860 });
    }
  });

  it('shows the prompt, the plan with its step inputs and where a task waits: consent for the user’s GitHub', async () => {
    const id = await create({ prompt: 'List the open issues in acme/api', user_id: 'user_consent' });
    await waitFor(async () => (await statusOf(id)) === 'waiting', { what: 'task waiting', timeoutMs: 20_000 });
    await page().goto(url(`/tasks/${id}?env=test`));
    await expect(text('prompt')).resolves.toBe('List the open issues in acme/api');
    const stage = await text('stage');
    expect(stage).toContain('Waiting for connection consent');
    expect(stage).toContain("Step 1 of 1 (github.list_issues) needs user_consent's github connection");
    const step = page().getByTestId('plan').locator('tr[data-step="1"]');
    const stepText = ((await step.textContent()) ?? '').replace(/\s+/g, ' ');
    expect(stepText).toContain('github.list_issues');
    expect(stepText).toContain('acme');
    expect(stepText).toContain('waiting');
    await shot(page(), 'dashboard-task-waiting');
  });

  it('masks a credential in the prompt and in the step input it went into', async () => {
    const id = await create({ prompt: 'Fetch https://example.com/data with header X-Api-Key: sekret-value-123' });
    await page().goto(url(`/tasks/${id}?env=test`));
    const html = await page().content();
    expect(html).not.toContain('sekret-value-123');
    await expect(text('prompt')).resolves.toBe('Fetch https://example.com/data with header X-Api-Key: [redacted]');
    const step = ((await page().getByTestId('plan').locator('tr[data-step="1"]').textContent()) ?? '').replace(/\s+/g, ' ');
    expect(step).toContain('http.fetch');
    expect(step).toContain('"url": "https://example.com/data"');
    expect(step).toContain('"X-Api-Key": "[redacted]"');
  });
});
