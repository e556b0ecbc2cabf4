import { html } from '@tes/html';
import { barePage, href, layout, type DashCtx, type Tab } from '../layout.js';

/** An error page: inside the dashboard's frame when signed in, bare otherwise. */
export function errorPage(ctx: DashCtx | null, o: { title: string; message: string; tab?: Tab }): string {
  const body = html`<div class="card ${ctx ? '' : 'narrow'}">
    <h1>${o.title}</h1>
    <p role="alert">${o.message}</p>
    <p>
      <a href="${href(ctx ? `/${o.tab ?? 'keys'}` : '/sign-in', ctx ? { env: ctx.env } : {})}"
        >${ctx ? 'Back to the dashboard' : 'Go to sign in'}</a
      >
    </p>
  </div>`;
  return ctx ? layout(ctx, { title: o.title, tab: o.tab ?? 'keys', body }) : barePage(o.title, body);
}
