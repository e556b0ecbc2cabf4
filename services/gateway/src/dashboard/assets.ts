import { createHash } from 'node:crypto';

/**
 * The dashboard's only stylesheet and its icon, served from /dashboard/assets/ (they live in
 * TypeScript so that the build's output, which is what images ship, carries them). The look is
 * the oauth-vault's end-user pages: system font, light cards on grey, GitHub-like colours,
 * status pills, a dark scheme. No external font, no CDN, no inline style (the CSP forbids it).
 */
export const DASHBOARD_CSS = `
:root { color-scheme: light dark; --bg: #f4f5f7; --card: #fff; --fg: #1f2328; --muted: #656d76; --soft: #444c56;
  --line: #e6e8eb; --accent: #0969da; --ok: #1a7f37; --warn: #bf8700; --err: #cf222e; --chip: #eef1f4; --focus: #0969da; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  background: var(--bg); color: var(--fg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 4px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.skip { position: absolute; left: -999px; top: 8px; background: var(--card); padding: 8px 12px; border-radius: 6px; z-index: 10; }
.skip:focus { left: 8px; }
header.top { background: var(--card); border-bottom: 1px solid var(--line); }
.topbar { max-width: 1080px; margin: 0 auto; padding: 10px 20px; display: flex; align-items: center; gap: 12px 20px; flex-wrap: wrap; }
.brand { font-weight: 650; color: var(--fg); text-decoration: none; display: flex; align-items: center; gap: 8px; }
.brand .logo { width: 26px; height: 26px; border-radius: 7px; background: var(--accent); color: #fff; display: inline-flex;
  align-items: center; justify-content: center; font-size: 14px; }
.acct { color: var(--muted); font-size: .9rem; }
.spacer { flex: 1; }
nav.tabs { max-width: 1080px; margin: 0 auto; padding: 0 20px; display: flex; gap: 4px; flex-wrap: wrap; }
nav.tabs a { padding: 10px 12px; color: var(--soft); text-decoration: none; border-bottom: 2px solid transparent; }
nav.tabs a[aria-current="page"] { color: var(--fg); border-bottom-color: var(--accent); font-weight: 600; }
.env { display: inline-flex; border: 1px solid #d0d7de; border-radius: 999px; overflow: hidden; font-size: .85rem; }
.env a { padding: 3px 12px; text-decoration: none; color: var(--soft); }
.env a[aria-current="true"] { background: var(--accent); color: #fff; }
.env a.live[aria-current="true"] { background: var(--ok); }
main { max-width: 1080px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 1.45rem; margin: 0 0 4px; }
h1 code { font-size: 1.15rem; word-break: break-all; }
h2 { font-size: 1.1rem; margin: 0 0 8px; }
p { margin: 8px 0; color: var(--soft); }
.lead { margin-bottom: 20px; }
.card { background: var(--card); border-radius: 12px; padding: 20px 24px; margin: 0 0 20px;
  box-shadow: 0 1px 3px rgba(0,0,0,.08), 0 8px 24px rgba(0,0,0,.06); }
.card > :last-child { margin-bottom: 0; }
.narrow { max-width: 440px; margin: 8vh auto 0; }
.row { display: flex; gap: 12px; flex-wrap: wrap; align-items: flex-end; }
.row > .grow { flex: 1 1 240px; }
label { display: block; font-size: .85rem; font-weight: 600; margin: 0 0 4px; }
.field { margin: 0 0 14px; }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=number], select {
  font: inherit; width: 100%; padding: 7px 10px; border: 1px solid #d0d7de; border-radius: 6px; background: var(--card); color: var(--fg); }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=number], select, button.primary { min-height: 38px; }
input[readonly] { background: var(--chip); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9rem; }
button, .button { font: inherit; font-size: .95rem; border: 1px solid #d0d7de; background: #f6f8fa; color: var(--fg);
  border-radius: 6px; padding: 6px 14px; cursor: pointer; text-decoration: none; display: inline-block; line-height: 1.4; }
button.primary { background: #1f883d; border-color: #1a7f37; color: #fff; font-weight: 600; }
button.danger { color: var(--err); }
button.link { border: 0; background: none; color: var(--accent); padding: 0; text-decoration: underline; }
form.inline { display: inline; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; }
details.confirm { display: inline-block; }
details.confirm > summary { list-style: none; cursor: pointer; display: inline-block; border: 1px solid #d0d7de; border-radius: 6px;
  padding: 4px 12px; background: #f6f8fa; font-size: .9rem; }
details.confirm > summary::-webkit-details-marker { display: none; }
details.confirm.danger > summary { color: var(--err); }
details.confirm[open] > summary { margin-bottom: 8px; }
details.confirm .box { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; max-width: 360px; background: var(--card); }
details.confirm .box p { margin: 0 0 8px; font-size: .9rem; }
.table-wrap { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 9px 8px; border-bottom: 1px solid var(--line); vertical-align: top; font-size: .95rem; }
th { font-size: .78rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88rem; }
pre { background: var(--chip); border-radius: 8px; padding: 12px; overflow-x: auto; font-size: .85rem; margin: 8px 0 0; }
pre.wrap { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 28rem; overflow-y: auto; }
details.attempt { border-top: 1px solid var(--line); padding: 8px 0; }
details.attempt > summary { cursor: pointer; font-weight: 600; }
details.attempt h3 { font-size: .95rem; margin: 12px 0 4px; }
details.attempt th { text-align: left; font-weight: normal; white-space: nowrap; }
.muted { color: var(--muted); }
.small { font-size: .85rem; }
.pill { display: inline-block; font-size: .78rem; padding: 1px 9px; border-radius: 999px; background: var(--chip); color: var(--soft); white-space: nowrap; }
.pill.ok, .pill.complete, .pill.delivered, .pill.connected, .pill.active { background: #dafbe1; color: #116329; }
.pill.running, .pill.pending, .pill.test { background: #ddf4ff; color: #0a3069; }
.pill.waiting, .pill.broken, .pill.no_endpoint, .pill.skipped, .pill.expiring { background: #fff8c5; color: #7d4e00; }
.pill.failed, .pill.undeliverable, .pill.revoked, .pill.expired, .pill.err { background: #ffebe9; color: #a40e26; }
.pill.cancelled { background: #eaeef2; color: #57606a; }
.pill.live { background: #dafbe1; color: #116329; }
.flash { padding: 10px 14px; border-radius: 8px; background: #ddf4ff; color: #0a3069; margin: 0 0 16px; }
.flash.ok { background: #dafbe1; color: #116329; }
.flash.err { background: #ffebe9; color: #82071e; }
.flash.warn { background: #fff8c5; color: #6c4400; }
.flash strong { display: block; }
.secret { display: flex; gap: 8px; align-items: center; margin-top: 8px; }
.secret input { flex: 1; }
.empty { text-align: center; padding: 28px 12px; color: var(--muted); }
.empty strong { display: block; color: var(--fg); margin-bottom: 4px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 20px; }
.stat { font-size: 2rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.stat small { font-size: 1rem; color: var(--muted); font-weight: 400; }
svg.meter { width: 100%; height: 12px; display: block; margin: 8px 0; }
svg.meter .track { fill: var(--chip); }
svg.meter .fill { fill: var(--accent); }
svg.meter .fill.warn { fill: var(--warn); }
svg.meter .fill.err { fill: var(--err); }
.timeline td.bar { width: 40%; min-width: 120px; }
svg.span { width: 100%; height: 14px; display: block; }
svg.span .track { fill: var(--chip); }
svg.span .fill { fill: var(--accent); }
svg.span .fill.failed { fill: var(--err); }
svg.span .fill.skipped, svg.span .fill.cancelled { fill: #8c959f; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 18px; margin: 0; }
dl.facts dt { color: var(--muted); font-size: .9rem; }
dl.facts dd { margin: 0; word-break: break-word; }
a.button[aria-current="true"] { border-color: var(--accent); background: #ddf4ff; color: #0a3069; }
ul.plain { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: 6px; }
ul.attempts { list-style: none; padding: 0; margin: 0; font-size: .88rem; }
ul.attempts li { white-space: nowrap; }
.pager { display: flex; justify-content: space-between; align-items: center; margin-top: 12px; gap: 12px; flex-wrap: wrap; }
footer { max-width: 1080px; margin: 0 auto; padding: 0 20px 32px; color: var(--muted); font-size: .8rem; }
@media (max-width: 640px) {
  main { padding: 16px 12px 40px; }
  .card { padding: 16px; border-radius: 10px; }
  .topbar, nav.tabs { padding-left: 12px; padding-right: 12px; }
  .topbar .who { display: none; }
  nav.tabs a { padding: 8px 8px; }
  table.stack thead { display: none; }
  table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: 6px 0; }
  table.stack tr:last-child { border-bottom: 0; }
  table.stack td { display: block; position: relative; border: 0; padding: 4px 0 4px 100px; min-height: 30px; }
  table.stack td::before { content: attr(data-label); position: absolute; left: 0; top: 6px; width: 92px; color: var(--muted);
    font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; }
  table.stack td.num { text-align: left; }
  table.stack code { word-break: break-all; }
  .timeline td.bar { width: auto; }
  dl.facts { grid-template-columns: 1fr; gap: 0 0; }
  dl.facts dd { margin-bottom: 8px; }
  ul.attempts li { white-space: normal; }
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --card: #161b22; --fg: #e6edf3; --muted: #9da7b3; --soft: #c9d1d9; --line: #30363d; --chip: #21262d; --accent: #4493f8; }
  .card { box-shadow: none; border: 1px solid var(--line); }
  button, .button, details.confirm > summary { background: #21262d; border-color: #30363d; color: var(--fg); }
  input[type=text], input[type=email], input[type=password], input[type=url], input[type=number], select { border-color: #30363d; }
  .env { border-color: #30363d; }
}
`;

export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#0969da"/><path d="M9 11h14M9 16h10M9 21h6" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>`;

/** Short content hash: the assets' URLs change when they do, so they can be cached long. */
export const ASSET_VERSION = createHash('sha256').update(DASHBOARD_CSS).update(ICON_SVG).digest('hex').slice(0, 10);
