import type { Environment } from '@tes/contracts';
import type { Account } from '../domain/account.js';
import type { Owner } from './owner.js';
import { ASSET_VERSION } from './assets.js';
import { Html, escapeHtml, html, htmlDocument, raw } from '@tes/html';

/** What every signed-in page knows. */
export interface DashCtx {
  owner: Owner;
  account: Account;
  /** The session's CSRF token (bound to its session id). */
  csrf: string;
  /** The environment shown by per-environment pages (`?env=`; test by default). */
  env: Environment;
}

export type Tab = 'keys' | 'webhooks' | 'tasks' | 'connections' | 'usage';

const TABS: { tab: Tab; label: string; perEnv: boolean }[] = [
  { tab: 'keys', label: 'API keys', perEnv: false },
  { tab: 'webhooks', label: 'Webhooks', perEnv: true },
  { tab: 'tasks', label: 'Tasks', perEnv: true },
  { tab: 'connections', label: 'Connections', perEnv: true },
  { tab: 'usage', label: 'Usage', perEnv: false },
];

export const BASE = '/dashboard';

/** Joins query parameters into `?a=1&b=2` (empty values left out). */
function query(params: Record<string, string | number | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function href(path: string, params: Record<string, string | number | undefined | null> = {}): string {
  return `${BASE}${path}${query(params)}`;
}

function shell(title: string, inner: Html): string {
  return htmlDocument({
    title: `${title} · Task Execution Service`,
    referrer: 'same-origin',
    head: raw(`<link rel="stylesheet" href="${BASE}/assets/dashboard.css?v=${ASSET_VERSION}">
<link rel="icon" type="image/svg+xml" href="${BASE}/assets/icon.svg?v=${ASSET_VERSION}">`),
    body: inner,
  });
}

/** A signed-in page: header (account, environment switch, sign out), tabs, content. */
export function layout(ctx: DashCtx, o: { title: string; tab: Tab; body: Html; envSwitch?: boolean; path?: string }): string {
  const perEnv = o.envSwitch ?? TABS.find((t) => t.tab === o.tab)?.perEnv ?? false;
  const path = o.path ?? `/${o.tab}`;
  const envSwitch = perEnv
    ? html`<span class="env" role="group" aria-label="Environment">
        ${(['test', 'live'] as const).map(
          (e) =>
            html`<a class="${e}" href="${href(path, { env: e })}" aria-current="${ctx.env === e ? 'true' : 'false'}"
              >${e === 'test' ? 'Test' : 'Live'}</a
            >`,
        )}
      </span>`
    : '';
  return shell(
    o.title,
    html`<a class="skip" href="#content">Skip to content</a>
      <header class="top">
        <div class="topbar">
          <a class="brand" href="${href('/keys', { env: ctx.env })}"
            ><span class="logo" aria-hidden="true">▤</span>Task Execution Service</a
          >
          <span class="acct">${ctx.account.name} · ${ctx.account.plan} plan</span>
          <span class="spacer"></span>
          ${envSwitch}
          <span class="acct who">${ctx.owner.email}</span>
          <form class="inline" method="post" action="${href('/sign-out')}">${csrfField(ctx)}<button type="submit">Sign out</button></form>
        </div>
        <nav class="tabs" aria-label="Dashboard">
          ${TABS.map(
            (t) =>
              html`<a href="${href(`/${t.tab}`, { env: ctx.env })}" ${t.tab === o.tab ? new Html('aria-current="page"') : ''}
                >${t.label}</a
              >`,
          )}
        </nav>
      </header>
      <main id="content" tabindex="-1">${o.body}</main>
      <footer>Signed in as ${ctx.owner.email}. Account ${ctx.account._id}.</footer>`,
  );
}

/** A page outside the session (sign-in, errors before sign-in). */
export function barePage(title: string, body: Html): string {
  return shell(title, html`<main id="content">${body}</main>`);
}

export function csrfField(ctx: { csrf: string }): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf}" />`;
}

export function hidden(fields: Record<string, string>): Html {
  return html`${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`)}`;
}

/**
 * A destructive action behind a disclosure: the first activation (click, Enter or Space on the
 * summary) only opens it; the POST happens on the second, deliberate button. No script.
 */
export function confirmAction(
  ctx: DashCtx,
  o: { summary: string; prompt: string; action: string; fields: Record<string, string>; button: string; danger?: boolean; label?: string },
): Html {
  return html`<details class="confirm ${o.danger ? 'danger' : ''}">
    <summary ${o.label ? new Html(`aria-label="${escapeHtml(o.label)}"`) : ''}>${o.summary}</summary>
    <div class="box">
      <p>${o.prompt}</p>
      <form method="post" action="${o.action}">
        ${csrfField(ctx)}${hidden(o.fields)}
        <button type="submit" class="${o.danger ? 'danger' : 'primary'}">${o.button}</button>
      </form>
    </div>
  </details>`;
}

export type FlashKind = 'ok' | 'err' | 'warn' | 'info';
export interface Flash {
  kind: FlashKind;
  title: string;
  text?: string | Html;
}

export function flash(f: Flash | undefined | null): Html | '' {
  if (!f) return '';
  const role = f.kind === 'err' ? 'alert' : 'status';
  return html`<div class="flash ${f.kind}" role="${role}"><strong>${f.title}</strong>${f.text ?? ''}</div>`;
}

export function pill(status: string, text = status): Html {
  return html`<span class="pill ${status.replace(/[^a-z_]/g, '')}">${text.replace(/_/g, ' ')}</span>`;
}

export function empty(title: string, text: string | Html): Html {
  return html`<div class="empty"><strong>${title}</strong>${text}</div>`;
}

/** `2026-01-01 12:08:21 UTC` in a <time> element. */
export function when(value: string | Date | null | undefined, o: { short?: boolean } = {}): Html | '' {
  if (!value) return '';
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) return '';
  const iso = d.toISOString();
  const text = o.short ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
  return html`<time datetime="${iso}">${text}</time>`;
}

/** A horizontal meter in SVG (no inline style: the CSP forbids it; SVG attributes are fine). */
export function meter(value: number, max: number, label: string): Html {
  const ratio = max > 0 ? Math.min(1, Math.max(0, value / max)) : 0;
  const tone = ratio >= 1 ? 'err' : ratio >= 0.8 ? 'warn' : '';
  const width = (ratio * 1000).toFixed(1);
  return html`<svg class="meter" viewBox="0 0 1000 12" preserveAspectRatio="none" role="img" aria-label="${label}">
    <rect class="track" x="0" y="0" width="1000" height="12" rx="6"></rect>
    <rect class="fill ${tone}" x="0" y="0" width="${width}" height="12" rx="6"></rect>
  </svg>`;
}

/** One step of a timeline: where it starts and how long it lasts, as fractions of the total. */
export function span(start: number, length: number, status: string, label: string): Html {
  const x = Math.min(1000, Math.max(0, start * 1000));
  const w = Math.max(4, Math.min(1000 - x, length * 1000));
  return html`<svg class="span" viewBox="0 0 1000 14" preserveAspectRatio="none" role="img" aria-label="${label}">
    <rect class="track" x="0" y="0" width="1000" height="14" rx="3"></rect>
    <rect class="fill ${status.replace(/[^a-z]/g, '')}" x="${x.toFixed(1)}" y="0" width="${w.toFixed(1)}" height="14" rx="3"></rect>
  </svg>`;
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
