/**
 * A small but real browser for the consent flow: follows redirects across the vault and the
 * authorization server, keeps cookies (RFC 6265 host + path matching, enough for these two
 * servers), and submits the HTML forms it is shown, as a person would.
 */
export interface Page {
  url: string;
  status: number;
  text: string;
  headers: Headers;
}

interface Cookie {
  name: string;
  value: string;
  host: string;
  path: string;
}

export class Browser {
  private cookies: Cookie[] = [];
  /** Every URL visited, in order (tests look at the redirect chain). */
  readonly visited: string[] = [];

  async get(url: string): Promise<Page> {
    return this.navigate(url, { method: 'GET' });
  }

  async submit(page: Page, fields: Record<string, string> = {}, formIndex = 0): Promise<Page> {
    const forms = parseForms(page.text);
    const form = forms[formIndex];
    if (!form) throw new Error(`no form #${formIndex} on ${page.url}:\n${page.text.slice(0, 500)}`);
    const body = new URLSearchParams({ ...form.fields, ...fields }).toString();
    return this.navigate(new URL(form.action || page.url, page.url).toString(), {
      method: form.method,
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  }

  /** Index of the first form on the page with a field `name` = `value`. */
  formIndex(page: Page, name: string, value: string): number {
    const i = parseForms(page.text).findIndex((f) => f.fields[name] === value);
    if (i < 0) throw new Error(`no form with ${name}=${value} on ${page.url}`);
    return i;
  }

  /** The first link on the page whose text matches. */
  link(page: Page, text: RegExp): string {
    for (const m of page.text.matchAll(/<a\s[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a\s*>/gi)) {
      if (text.test(m[2] ?? '')) return new URL(decodeEntities(m[1] ?? ''), page.url).toString();
    }
    throw new Error(`no link ${String(text)} on ${page.url}`);
  }

  cookieNames(): string[] {
    return this.cookies.map((c) => c.name);
  }

  clearCookies(filter: (name: string) => boolean = () => true): void {
    this.cookies = this.cookies.filter((c) => !filter(c.name));
  }

  private async navigate(url: string, init: { method: string; body?: string; headers?: Record<string, string> }): Promise<Page> {
    let current = url;
    let req = init;
    for (let hop = 0; hop < 20; hop++) {
      this.visited.push(current);
      const u = new URL(current);
      const cookie = this.cookies
        .filter((c) => c.host === u.hostname && u.pathname.startsWith(c.path))
        .map((c) => `${c.name}=${c.value}`)
        .join('; ');
      const res = await fetch(current, {
        method: req.method,
        redirect: 'manual',
        headers: { ...(req.headers ?? {}), ...(cookie ? { cookie } : {}), accept: 'text/html' },
        ...(req.body !== undefined ? { body: req.body } : {}),
      });
      for (const sc of res.headers.getSetCookie()) this.store(sc, u);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        current = new URL(location, current).toString();
        // 303 (and 302 after POST, as browsers do) become GET.
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && req.method === 'POST')) req = { method: 'GET' };
        await res.arrayBuffer();
        continue;
      }
      return { url: current, status: res.status, text: await res.text(), headers: res.headers };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  private store(header: string, u: URL): void {
    const [pair = '', ...attrs] = header.split(';');
    const i = pair.indexOf('=');
    if (i <= 0) return;
    const name = pair.slice(0, i).trim();
    const value = pair.slice(i + 1).trim();
    let path = '/';
    let expired = false;
    for (const a of attrs) {
      const [k = '', v = ''] = a.split('=').map((s) => s.trim());
      if (k.toLowerCase() === 'path' && v) path = v;
      if (k.toLowerCase() === 'max-age' && Number(v) <= 0) expired = true;
      if (k.toLowerCase() === 'expires' && Date.parse(v) < Date.now()) expired = true;
    }
    this.cookies = this.cookies.filter((c) => !(c.name === name && c.host === u.hostname && c.path === path));
    if (!expired) this.cookies.push({ name, value, host: u.hostname, path });
  }
}

interface Form {
  action: string;
  method: string;
  fields: Record<string, string>;
}

function parseForms(htmlText: string): Form[] {
  const forms: Form[] = [];
  for (const m of htmlText.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form\s*>/gi)) {
    const attrs = m[1] ?? '';
    const action = decodeEntities(/action="([^"]*)"/i.exec(attrs)?.[1] ?? '');
    const method = (/method="([^"]*)"/i.exec(attrs)?.[1] ?? 'get').toUpperCase();
    const fields: Record<string, string> = {};
    for (const input of (m[2] ?? '').matchAll(/<input\b([^>]*)>/gi)) {
      const a = input[1] ?? '';
      const name = /name="([^"]*)"/i.exec(a)?.[1];
      if (name) fields[decodeEntities(name)] = decodeEntities(/value="([^"]*)"/i.exec(a)?.[1] ?? '');
    }
    forms.push({ action, method, fields });
  }
  return forms;
}

function decodeEntities(s: string): string {
  return s
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
}

/** The vault's page behind an `auth_url`, asking to continue to the provider. */
export function isConsentPage(page: Page): boolean {
  return /<form method="post" action="\/oauth\/consent">/.test(page.text);
}

/**
 * Opens an `auth_url` (the vault's consent page, then Continue) and goes through the provider's sign-in and consent pages: grants
 * (submits the forms) or denies (follows the provider's Cancel link). Returns the page the
 * browser ends on (the vault's callback page).
 */
export async function consent(browser: Browser, authUrl: string, o: { deny?: boolean; login?: string } = {}): Promise<Page> {
  let page = await browser.get(authUrl);
  // The vault's consent page (which application, which user): Continue.
  if (isConsentPage(page)) page = await browser.submit(page);
  for (let i = 0; i < 6; i++) {
    if (!/name="prompt"/.test(page.text)) return page;
    if (o.deny) {
      page = await browser.get(browser.link(page, /Cancel/));
      continue;
    }
    const prompt = /name="prompt" value="([^"]+)"/.exec(page.text)?.[1];
    page = await browser.submit(page, prompt === 'login' ? { login: o.login ?? 'alice', password: 'any-password' } : {});
  }
  return page;
}

/**
 * Opens an `auth_url` and presses Continue without following the answer: the vault's response
 * (a 303 to the provider's authorize URL, with the browser-nonce cookie) as fetch gives it.
 */
export async function continueConsent(authUrl: string): Promise<Response> {
  const page = await fetch(authUrl, { redirect: 'manual' });
  const text = await page.text();
  if (!isConsentPage({ url: authUrl, status: page.status, text, headers: page.headers })) {
    throw new Error(`not a consent page (${page.status}) at ${authUrl}:\n${text.slice(0, 300)}`);
  }
  const form = parseForms(text)[0]!;
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return fetch(new URL(form.action, authUrl), {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams(form.fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
  });
}
