import { html } from '@tes/html';
import { confirmAction, csrfField, empty, flash, href, layout, pill, when, type DashCtx, type Flash } from '../layout.js';
import { isWorking, maskedKey, type KeyView } from '../keys.js';

/** The full key of a just-created (or rolled) key: shown in this answer only. */
export interface NewKey {
  secret: string;
  key: KeyView;
  /** The key it replaces (a roll): revoked, or expiring at `expires_at`. */
  replaced?: KeyView;
}

const EXPIRY_CHOICES = [
  { value: 'now', label: 'Now' },
  { value: '1h', label: 'In 1 hour' },
  { value: '24h', label: 'In 24 hours' },
  { value: '7d', label: 'In 7 days' },
] as const;

const label = (k: KeyView) => (k.name ? `${k.name} (${maskedKey(k)})` : maskedKey(k));

/** What became of the rolled key, said once in the roll's answer. */
function replacedNote(old: KeyView) {
  return old.status === 'expiring'
    ? html` The old key keeps working until ${when(old.expires_at)}, then is refused (401).`
    : html` The old key stopped working.`;
}

/** Roll: a disclosure with the choice of when the old key stops working (no script). */
function rollAction(ctx: DashCtx, k: KeyView) {
  const id = `roll-exp-${k.id}`;
  return html`<details class="confirm">
    <summary aria-label="${`Roll ${label(k)}`}">Roll</summary>
    <div class="box">
      <p>
        A new ${k.environment} key${k.name ? ` named ${k.name}` : ''} is created and shown once. Choose when ${maskedKey(k)} stops working.
      </p>
      <form method="post" action="${href(`/keys/${k.id}/roll`)}">
        ${csrfField(ctx)}
        <label for="${id}">Old key expires</label>
        <select id="${id}" name="expires_in">
          ${EXPIRY_CHOICES.map((c) => html`<option value="${c.value}">${c.label}</option>`)}
        </select>
        <button type="submit" class="primary">Roll key</button>
      </form>
    </div>
  </details>`;
}

export function keysPage(ctx: DashCtx, o: { keys: KeyView[]; created?: NewKey; flash?: Flash | null }): string {
  const working = o.keys.filter(isWorking);
  const ended = o.keys.filter((k) => !isWorking(k));
  const created = o.created
    ? html`<div class="flash ok" role="status">
        <strong>${o.created.replaced ? `Key ${maskedKey(o.created.replaced)} was rolled` : 'New API key created'}</strong>
        Copy it now: it is shown only this once and cannot be recovered. ${o.created.replaced ? replacedNote(o.created.replaced) : ''}
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
          <td data-label="Name">${k.name ?? html`<span class="muted">unnamed</span>`}</td>
          <td data-label="Key"><code>${maskedKey(k)}</code></td>
          <td data-label="Env">${pill(k.environment === 'live' ? 'live' : 'test', k.environment)}</td>
          <td data-label="Status">${pill(k.status)}</td>
          <td data-label="Created">${when(k.created_at)}</td>
          <td data-label="Last used">${k.last_used_at ? when(k.last_used_at) : html`<span class="muted">never</span>`}</td>
          <td data-label="Expires">
            ${k.status === 'revoked' ? html`<span class="muted">revoked ${when(k.revoked_at)}</span>` : k.expires_at ? when(k.expires_at) : html`<span class="muted">never</span>`}
          </td>
          <td data-label="Actions">
            ${
              isWorking(k)
                ? html`<div class="actions">
                    ${rollAction(ctx, k)}
                    ${confirmAction(ctx, {
                      summary: 'Revoke',
                      label: `Revoke ${label(k)}`,
                      prompt: `Requests with ${maskedKey(k)} are refused (401) from the next one on.`,
                      action: href(`/keys/${k.id}/revoke`),
                      fields: {},
                      button: 'Revoke key',
                      danger: true,
                    })}
                  </div>`
                : ''
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
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Env</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
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
      the prefix and the last four characters are kept visible. Rolling a key makes a new one and lets the old one work on for the time you
      choose; "last used" is recorded to the minute.
    </p>
    ${flash(o.flash)}${created}
    <section class="card" aria-labelledby="create-h">
      <h2 id="create-h">Create a key</h2>
      <form method="post" action="${href('/keys')}" class="row">
        ${csrfField(ctx)}
        <div class="grow">
          <label for="key-name">Name (optional)</label>
          <input id="key-name" name="name" type="text" maxlength="64" placeholder="e.g. billing worker" />
        </div>
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
      ${working.length ? table(working, 'Active API keys') : empty('No active key', ' Create one above to start calling the API.')}
    </section>
    ${
      ended.length
        ? html`<section class="card" aria-labelledby="revoked-h">
            <h2 id="revoked-h">Revoked and expired keys</h2>
            ${table(ended, 'Revoked and expired API keys')}
          </section>`
        : ''
    }`;
  return layout(ctx, { title: 'API keys', tab: 'keys', body });
}
