import { html } from '@tes/html';
import { confirmAction, csrfField, empty, flash, href, layout, pill, when, type DashCtx, type Flash } from '../layout.js';
import { maskedKey, type KeyView } from '../keys.js';

/** The full key of a just-created (or rotated) key: shown in this answer only. */
export interface NewKey {
  secret: string;
  key: KeyView;
  replaced?: KeyView;
}

export function keysPage(ctx: DashCtx, o: { keys: KeyView[]; created?: NewKey; flash?: Flash | null }): string {
  const active = o.keys.filter((k) => k.status === 'active');
  const revoked = o.keys.filter((k) => k.status === 'revoked');
  const created = o.created
    ? html`<div class="flash ok" role="status">
        <strong>${o.created.replaced ? `Key ${maskedKey(o.created.replaced)} was rotated` : 'New API key created'}</strong>
        Copy it now: it is shown only this once and cannot be recovered. ${o.created.replaced ? html` The old key stopped working.` : ''}
        <div class="secret">
          <label class="sr" for="new-key">${o.created.key.environment === 'live' ? 'Live' : 'Test'} key</label>
          <input id="new-key" type="text" readonly value="${o.created.secret}" data-testid="new-key" autofocus />
        </div>
      </div>`
    : '';
  const rows = (list: KeyView[]) =>
    list.map(
      (k) =>
        html`<tr data-key-id="${k.id}">
          <td data-label="Key"><code>${maskedKey(k)}</code></td>
          <td data-label="Env">${pill(k.environment === 'live' ? 'live' : 'test', k.environment)}</td>
          <td data-label="Status">${pill(k.status)}</td>
          <td data-label="Created">${when(k.created_at)}</td>
          <td data-label="Actions">
            ${
              k.status === 'active'
                ? html`<div class="actions">
                    ${confirmAction(ctx, {
                      summary: 'Rotate',
                      label: `Rotate ${maskedKey(k)}`,
                      prompt: `A new ${k.environment} key is created and ${maskedKey(k)} stops working at once.`,
                      action: href(`/keys/${k.id}/rotate`),
                      fields: {},
                      button: 'Rotate key',
                    })}
                    ${confirmAction(ctx, {
                      summary: 'Revoke',
                      label: `Revoke ${maskedKey(k)}`,
                      prompt: `Requests with ${maskedKey(k)} are refused (401) from the next one on.`,
                      action: href(`/keys/${k.id}/revoke`),
                      fields: {},
                      button: 'Revoke key',
                      danger: true,
                    })}
                  </div>`
                : html`<span class="muted small">revoked ${when(k.revoked_at)}</span>`
            }
          </td>
        </tr>`,
    );
  const table = (list: KeyView[], caption: string) =>
    html`<div class="table-wrap">
      <table class="stack">
        <caption class="sr">
          ${caption}
        </caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Env</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${rows(list)}
        </tbody>
      </table>
    </div>`;
  const body = html`<h1>API keys</h1>
    <p class="lead">
      Keys authenticate API requests (<code>Authorization: Bearer pk_…</code>). Test keys run in sandbox mode; live keys act for real. Only
      the prefix and the last four characters are kept visible.
    </p>
    ${flash(o.flash)}${created}
    <section class="card" aria-labelledby="create-h">
      <h2 id="create-h">Create a key</h2>
      <form method="post" action="${href('/keys')}" class="row">
        ${csrfField(ctx)}
        <div>
          <label for="key-env">Environment</label>
          <select id="key-env" name="environment">
            <option value="test" ${ctx.env === 'test' ? html`selected` : ''}>Test (pk_test_)</option>
            <option value="live" ${ctx.env === 'live' ? html`selected` : ''}>Live (pk_live_)</option>
          </select>
        </div>
        <div><button type="submit" class="primary">Create key</button></div>
      </form>
    </section>
    <section class="card" aria-labelledby="active-h">
      <h2 id="active-h">Active keys</h2>
      ${active.length ? table(active, 'Active API keys') : empty('No active key', ' Create one above to start calling the API.')}
    </section>
    ${
      revoked.length
        ? html`<section class="card" aria-labelledby="revoked-h">
            <h2 id="revoked-h">Revoked keys</h2>
            ${table(revoked, 'Revoked API keys')}
          </section>`
        : ''
    }`;
  return layout(ctx, { title: 'API keys', tab: 'keys', body });
}
