import { html } from '@tes/html';
import { barePage, flash, href, type Flash } from '../layout.js';

export function signInPage(o: { csrf: string; email?: string; flash?: Flash | null }): string {
  return barePage(
    'Sign in',
    html`<div class="card narrow">
      <h1>Sign in</h1>
      <p class="lead">The dashboard of your Task Execution Service account: API keys, webhooks, tasks, connections and usage.</p>
      ${flash(o.flash)}
      <form method="post" action="${href('/sign-in')}" novalidate>
        <input type="hidden" name="_csrf" value="${o.csrf}" />
        <div class="field">
          <label for="email">Email</label>
          <input
            id="email"
            name="email"
            type="email"
            autocomplete="username"
            required
            value="${o.email ?? ''}"
            ${o.email ? '' : html`autofocus`}
          />
        </div>
        <div class="field">
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required ${o.email ? html`autofocus` : ''} />
        </div>
        <button type="submit" class="primary">Sign in</button>
      </form>
      <p class="small muted">Accounts and owners are created by your operator (<code>pnpm admin owners create</code>).</p>
    </div>`,
  );
}
