import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT, admin, type Stack } from '@tes/testing';

/**
 * Shared by the dashboard's browser tests: Debian's Chromium driven by playwright-core
 * (headless, a fresh profile per suite), accounts and owners made with the operator CLIs.
 */

export const CHROMIUM_PATH = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
export const SESSION_SECRET = 'e2e-dashboard-session-secret-0123456789';

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 860 }): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: apt-get install -y chromium (.ci/run does it), or set CHROMIUM_PATH`);
  }
  const profile = mkdtempSync(path.join(tmpdir(), 'tes-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    ignoreHTTPSErrors: true,
    viewport,
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(15_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export function dashboardUrl(stack: Stack, p = ''): string {
  return `${stack.baseUrl.replace(/\/v1$/, '/dashboard')}${p}`;
}

/** A fresh account (with its webhook secrets) through `pnpm admin accounts create`. */
export async function newAccount(stack: Stack, name: string): Promise<{ account_id: string; api_keys: { test: string; live: string } }> {
  return (await admin(['accounts', 'create', '--name', name], stack.adminEnv)) as {
    account_id: string;
    api_keys: { test: string; live: string };
  };
}

/** The gateway's operator CLI: `owners create`, the password given on standard input. */
export function newOwner(stack: Stack, accountId: string, email: string, password: string): { owner_id: string; email: string } {
  const res = spawnSync(
    process.execPath,
    [
      path.join(REPO_ROOT, 'services', 'gateway', 'dist', 'cli.js'),
      'owners',
      'create',
      '--account',
      accountId,
      '--email',
      email,
      '--password-stdin',
    ],
    { env: { ...process.env, MONGO_DB: stack.adminEnv['GATEWAY_MONGO_DB'] ?? '' }, encoding: 'utf8', input: `${password}\n` },
  );
  if (res.status !== 0) throw new Error(`owners create failed (${res.status}): ${res.stderr}`);
  return JSON.parse(res.stdout) as { owner_id: string; email: string };
}

/** Signs in with the keyboard only: Tab to each field, type, Enter. */
export async function signIn(page: Page, stack: Stack, email: string, password: string): Promise<number> {
  await page.goto(dashboardUrl(stack, '/sign-in'));
  await page.locator('#email').focus();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  // The POST's answer (303 to the dashboard, or the form again with the reason), then the
  // document it leads to, fully loaded.
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/dashboard/sign-in') && r.request().method() === 'POST'),
    page.waitForEvent('load'),
    page.keyboard.press('Enter'),
  ]);
  return response.status();
}

/**
 * Screenshots of the main screens. They go to `.run/screenshots/` by default (ignored by git);
 * `DASHBOARD_SCREENSHOTS=docs` writes them to `docs/screenshots/`, the ones the README shows.
 */
export async function shot(page: Page, name: string, o: { fullPage?: boolean } = {}): Promise<string> {
  const dir =
    process.env['DASHBOARD_SCREENSHOTS'] === 'docs'
      ? path.join(REPO_ROOT, 'docs', 'screenshots')
      : path.join(REPO_ROOT, '.run', 'screenshots');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: o.fullPage ?? true });
  return file;
}

/** Reloads `url` until `check` holds (the page is server-rendered: state shows on the next load). */
export async function reloadUntil(page: Page, url: string, check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await page.goto(url);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} on ${url}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
