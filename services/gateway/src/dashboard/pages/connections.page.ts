import type { ConnectionView } from '@tes/contracts';
import { html } from '@tes/html';
import { confirmAction, empty, flash, href, layout, pill, when, type DashCtx, type Flash } from '../layout.js';

export function connectionsPage(
  ctx: DashCtx,
  o: { userId: string; users: string[]; connections: ConnectionView[] | null; error?: string; flash?: Flash | null },
): string {
  const search = html`<form method="get" action="${href('/connections')}" class="row" role="search" aria-label="Find an end user">
    <input type="hidden" name="env" value="${ctx.env}" />
    <div class="grow">
      <label for="user_id">End user (user_id)</label>
      <input id="user_id" name="user_id" type="text" required maxlength="256" value="${o.userId}" placeholder="user_42" />
    </div>
    <div><button type="submit" class="primary">Show connections</button></div>
  </form>`;
  const users = o.users.length
    ? html`<p class="small muted">End users of recent ${ctx.env} tasks:</p>
        <ul class="plain">
          ${o.users.map(
            (u) =>
              html`<li>
                <a
                  class="button"
                  href="${href('/connections', { env: ctx.env, user_id: u })}"
                  ${u === o.userId ? html`aria-current="true"` : ''}
                  ><code>${u}</code></a
                >
              </li>`,
          )}
        </ul>`
    : html`<p class="small muted">No ${ctx.env} task has named an end user yet. Type a user_id above.</p>`;
  let result = html``;
  if (o.userId) {
    const list = o.connections;
    result = html`<section class="card" aria-labelledby="conn-h">
      <h2 id="conn-h">Connected services of <code>${o.userId}</code></h2>
      ${
        list === null
          ? html`<p role="alert" class="muted">${o.error ?? 'The connections could not be read right now.'}</p>`
          : list.length === 0
            ? empty(
                'No connected service',
                ' This user has not authorized any service in this environment. A task that needs one pauses with an auth_url.',
              )
            : html`<div class="table-wrap">
                <table class="stack" data-testid="connections">
                  <thead>
                    <tr>
                      <th scope="col">Service</th>
                      <th scope="col">Scopes</th>
                      <th scope="col">Status</th>
                      <th scope="col">Connected</th>
                      <th scope="col"></th>
                    </tr>
                  </thead>
                  <tbody>
                    ${list.map(
                      (c) =>
                        html`<tr data-service="${c.service}">
                          <td data-label="Service"><strong>${c.service}</strong></td>
                          <td data-label="Scopes" class="small">${c.scopes.join(', ') || html`<span class="muted">none</span>`}</td>
                          <td data-label="Status">${pill(c.status)}</td>
                          <td data-label="Connected">${when(c.connected_at)}</td>
                          <td data-label="">
                            ${
                              c.status !== 'revoked'
                                ? confirmAction(ctx, {
                                    summary: 'Revoke…',
                                    label: `Revoke ${c.service} for ${o.userId}`,
                                    prompt: `The tokens are revoked at ${c.service} and deleted. Tasks of ${o.userId} that need ${c.service} will ask for consent again.`,
                                    action: href('/connections/revoke'),
                                    fields: { env: ctx.env, user_id: o.userId, service: c.service },
                                    button: 'Revoke connection',
                                    danger: true,
                                  })
                                : ''
                            }
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
      }
    </section>`;
  }
  const body = html`<h1>Connections <span class="pill ${ctx.env}">${ctx.env}</span></h1>
    <p class="lead">Your end users' connected services (OAuth). Tokens are never shown; revoking one ends it at the provider too.</p>
    ${flash(o.flash)}
    <section class="card">${search}${users}</section>
    ${result}`;
  return layout(ctx, { title: 'Connections', tab: 'connections', body });
}
