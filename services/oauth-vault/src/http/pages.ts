import { html, htmlDocument, raw, type Html } from '@tes/html';

/**
 * The vault's pages for end users: plain HTML with inline CSS (no external CSS, fonts or
 * scripts), every value escaped (@tes/html). Pages never show a token.
 *
 * The pages' Content-Security-Policy. `formTargets` are origins a form may lead to besides the
 * vault (browsers check form-action on the redirect after a POST too: the consent page's
 * Continue ends at the provider).
 */
export function contentSecurityPolicy(formTargets: string[] = []): string {
  const formAction = ["'self'", ...formTargets].join(' ');
  return `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

const STYLE = `
  :root { color-scheme: light dark; }
  * { box-sizing: border-box; }
  body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
    font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
    background: #f4f5f7; color: #1f2328; }
  main { width: min(560px, 92vw); background: #fff; border-radius: 12px; padding: 32px 36px;
    box-shadow: 0 1px 3px rgba(0,0,0,.08), 0 8px 24px rgba(0,0,0,.06); }
  h1 { font-size: 1.35rem; margin: 0 0 8px; display: flex; align-items: center; gap: 10px; }
  p { margin: 8px 0; color: #444c56; }
  .icon { display: inline-flex; width: 28px; height: 28px; border-radius: 50%; align-items: center;
    justify-content: center; color: #fff; font-size: 16px; flex: none; }
  .ok { background: #1a7f37; } .warn { background: #bf8700; } .err { background: #cf222e; }
  table { width: 100%; border-collapse: collapse; margin-top: 16px; }
  th, td { text-align: left; padding: 10px 6px; border-bottom: 1px solid #e6e8eb; vertical-align: top; }
  th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: #656d76; }
  .scopes { font-size: .85rem; color: #656d76; word-break: break-word; }
  .status { font-size: .8rem; padding: 2px 8px; border-radius: 999px; background: #eef1f4; }
  .status.connected { background: #dafbe1; color: #116329; }
  .status.broken { background: #fff8c5; color: #7d4e00; }
  .status.revoked { background: #ffebe9; color: #a40e26; }
  button { font: inherit; border: 1px solid #d0d7de; background: #f6f8fa; border-radius: 6px;
    padding: 4px 12px; cursor: pointer; }
  button.danger { color: #cf222e; }
  .note { margin-top: 16px; font-size: .85rem; color: #656d76; }
  .flash { padding: 8px 12px; border-radius: 6px; background: #ddf4ff; color: #0a3069; }
  a { color: #0969da; }
  @media (prefers-color-scheme: dark) {
    body { background: #0d1117; color: #e6edf3; } main { background: #161b22; box-shadow: none; }
    p, .scopes, th, .note { color: #9da7b3; } th, td { border-color: #30363d; }
    button { background: #21262d; border-color: #30363d; color: #e6edf3; }
  }
`;

export function page(title: string, body: Html): string {
  return htmlDocument({
    title,
    referrer: 'no-referrer',
    head: raw(`<style>${STYLE}</style>`),
    body: raw(`<main>\n${body.value}\n</main>`),
  });
}

export type Tone = 'ok' | 'warn' | 'err';

/** A one-message page: a heading with an icon, then paragraphs. */
export function messagePage(tone: Tone, title: string, paragraphs: (string | Html)[]): string {
  const icon = tone === 'ok' ? '✓' : tone === 'warn' ? '!' : '×';
  return page(
    title,
    html`<h1><span class="icon ${tone}" aria-hidden="true">${icon}</span>${title}</h1>
      ${paragraphs.map((p) => html`<p>${p}</p>`)}`,
  );
}
