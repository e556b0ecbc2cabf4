import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { admin, request, startStack, type Stack } from '@tes/testing';
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

/**
 * API keys in the dashboard, in a real browser (Debian's Chromium) against the gateway as a real
 * process: a named key, its last use, a roll with "In 1 hour" (both keys work, the old one listed
 * as expiring), revocation of the expiring key (401 at once), and the gateway's last-used writes
 * counted from its own database command monitoring (TES_DB_COMMAND_STATS).
 */
describe('dashboard: API keys rolled with an expiry (browser)', () => {
  const EMAIL = 'keys@acme.test';
  const PASSWORD = 'correct horse battery staple';
  const statsDir = mkdtempSync(path.join(tmpdir(), 'tes-keys-db-'));
  let stack: Stack;
  let browser: Browser;
  let accountId = '';
  let oldKey = '';
  let newKey = '';
  const page = () => browser.page;
  const url = (p: string) => dashboardUrl(stack, p);
  const api = (key: string) => request('GET', `${stack.baseUrl}/tasks`, { headers: { authorization: `Bearer ${key}` } });
  const rowOf = (key: string) => page().locator('tr', { hasText: `pk_test_…${key.slice(-4)}` });
  const cell = async (key: string, label: string) =>
    ((await rowOf(key).locator(`td[data-label="${label}"]`).textContent()) ?? '').replace(/\s+/g, ' ').trim();

  beforeAll(async () => {
    // The browser first: if it cannot start, no stack is left running.
    browser = await launchBrowser();
    // The keys pages and GET /v1/tasks need the gateway only.
    stack = await startStack({
      only: ['gateway'],
      env: { gateway: { DASHBOARD_SESSION_SECRET: SESSION_SECRET, TES_DB_COMMAND_STATS: statsDir } },
    });
    accountId = (await newAccount(stack, 'Acme Keys')).account_id;
    newOwner(stack, accountId, EMAIL, PASSWORD);
    expect(await signIn(page(), stack, EMAIL, PASSWORD)).toBe(303);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stopAll();
    rmSync(statsDir, { recursive: true, force: true });
  });

  it('creates a named key shown once, and shows when it was last used', async () => {
    await page().goto(url('/keys'));
    await page().fill('#key-name', 'billing worker');
    await page().selectOption('#key-env', 'test');
    await page().getByRole('button', { name: 'Create key' }).click();
    oldKey = await page().getByTestId('new-key').inputValue();
    expect(oldKey).toMatch(/^pk_test_[0-9A-Za-z]{32}$/);
    expect(await cell(oldKey, 'Name')).toBe('billing worker');
    expect(await cell(oldKey, 'Last used')).toBe('never');
    expect(await cell(oldKey, 'Expires')).toBe('never');

    const before = Date.now();
    expect((await api(oldKey)).status).toBe(200);
    await reloadUntil(page(), url('/keys'), async () => (await cell(oldKey, 'Last used')) !== 'never', 'the last use');
    const used = Date.parse((await rowOf(oldKey).locator('td[data-label="Last used"] time').getAttribute('datetime')) ?? '');
    expect(used).toBeGreaterThanOrEqual(before - 1000);
    expect(used).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await page().content()).not.toContain(oldKey);
  });

  it('rolls it with "In 1 hour": a new key of the same name, both work, the old one listed as expiring in an hour', async () => {
    const row = rowOf(oldKey);
    await row.getByText('Roll', { exact: true }).click();
    await row.locator('select[name="expires_in"]').selectOption('1h');
    const t0 = Date.now();
    await row.getByRole('button', { name: 'Roll key' }).click();
    const t1 = Date.now();
    const status = (await page().getByRole('status').textContent()) ?? '';
    expect(status).toContain(`Key pk_test_…${oldKey.slice(-4)} was rolled`);
    expect(status).toContain('The old key keeps working until');
    newKey = await page().getByTestId('new-key').inputValue();
    expect(newKey).toMatch(/^pk_test_/);
    expect(newKey).not.toBe(oldKey);

    expect((await api(oldKey)).status).toBe(200);
    expect((await api(newKey)).status).toBe(200);

    await page().goto(url('/keys'));
    expect(await cell(oldKey, 'Status')).toBe('expiring');
    const expires = Date.parse((await rowOf(oldKey).locator('td[data-label="Expires"] time').getAttribute('datetime')) ?? '');
    expect(expires).toBeGreaterThanOrEqual(t0 + 3_600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(t1 + 3_600_000 + 1000);
    expect([await cell(newKey, 'Name'), await cell(newKey, 'Status'), await cell(newKey, 'Expires')]).toEqual([
      'billing worker',
      'active',
      'never',
    ]);
    const content = await page().content();
    expect([content.includes(oldKey), content.includes(newKey)]).toEqual([false, false]);
    await shot(page(), 'dashboard-keys');
  });

  it('refuses an expiry or a name it does not offer with a 400 page, changing nothing', async () => {
    await page().goto(url('/keys'));
    const csrf = (await page().locator('input[name="_csrf"]').first().getAttribute('value')) ?? '';
    const keyId = (await rowOf(newKey).getAttribute('data-key-id')) ?? '';
    const before = await page().locator('tbody tr').count();
    const badExpiry = await page().request.post(url(`/keys/${keyId}/roll`), { form: { _csrf: csrf, expires_in: '30d' }, maxRedirects: 0 });
    expect(badExpiry.status()).toBe(400);
    expect(await badExpiry.text()).toContain('Choose when the old key stops working');
    const badName = await page().request.post(url('/keys'), {
      form: { _csrf: csrf, environment: 'test', name: 'x'.repeat(65) },
      maxRedirects: 0,
    });
    expect(badName.status()).toBe(400);
    expect(await badName.text()).toContain('at most 64 characters');
    await page().reload();
    expect(await page().locator('tbody tr').count()).toBe(before);
    expect([await cell(newKey, 'Status'), await cell(newKey, 'Expires')]).toEqual(['active', 'never']);
  });

  it('revokes the expiring old key: refused (401) on the next request, the new key unaffected', async () => {
    const row = rowOf(oldKey);
    await row.getByText('Revoke', { exact: true }).click();
    await row.getByRole('button', { name: 'Revoke key' }).click();
    await expect(page().getByRole('status').textContent()).resolves.toContain('Key revoked');
    const refused = await api(oldKey);
    expect([refused.status, refused.json?.error?.code]).toEqual([401, 'invalid_api_key']);
    expect((await api(newKey)).status).toBe(200);
    await expect(page().locator('section', { hasText: 'Revoked and expired keys' }).textContent()).resolves.toContain(
      `pk_test_…${oldKey.slice(-4)}`,
    );
  });

  it("writes a key's last use once for 25 requests in the running gateway (its database commands counted)", async () => {
    const gateway = stack.procs.get('gateway')!;
    const file = path.join(statsDir, `${stack.envOf('gateway')['MONGO_DB'] ?? ''}.json`);
    const usageWrites = async () => {
      gateway.child.kill('SIGUSR2'); // the gateway writes its command counts
      await new Promise((r) => setTimeout(r, 500));
      const counts = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>) : {};
      return counts['update api_key_usage'] ?? 0;
    };
    const created = (await admin(['keys', 'create', '--account', accountId, '--env', 'test', '--name', 'burst'], stack.adminEnv)) as {
      api_key: string;
      key_id: string;
    };
    const before = await usageWrites();
    const statuses = await Promise.all(Array.from({ length: 25 }, async () => (await api(created.api_key)).status));
    expect(statuses).toEqual(Array(25).fill(200));
    await new Promise((r) => setTimeout(r, 1000));
    expect((await usageWrites()) - before).toBe(1);
    const listed = (await admin(['keys', 'list', '--account', accountId], stack.adminEnv)) as {
      key_id: string;
      last_used_at: string | null;
    }[];
    expect(listed.find((k) => k.key_id === created.key_id)?.last_used_at).toEqual(expect.any(String));
    // No key in the gateway's logs.
    for (const k of [oldKey, newKey, created.api_key]) expect(gateway.output()).not.toContain(k);
  });
});
