import type { WebhookDeliveryInfo, WebhookEndpointInfo, WebhookSecretInfo } from '@tes/contracts';
import { html, type Html } from '@tes/html';
import { confirmAction, csrfField, empty, flash, hidden, href, layout, pill, when, type DashCtx, type Flash } from '../layout.js';

export interface WebhooksView {
  endpoint: WebhookEndpointInfo | null;
  secret: WebhookSecretInfo | null;
  /** Null when the log could not be read (the page shows why). */
  deliveries: WebhookDeliveryInfo[] | null;
  /** The URL the owner typed, kept after a refused save. */
  urlInput?: string;
  /** The secret in clear (after Reveal or Rotate). */
  revealed?: string;
  flash?: Flash | null;
  /** The dispatcher could not be asked at all. */
  unavailable?: string;
}

export function webhooksPage(ctx: DashCtx, v: WebhooksView): string {
  const envName = ctx.env === 'live' ? 'Live' : 'Test';
  const guardNote =
    ctx.env === 'live'
      ? 'Live endpoints must be https and reach a public address.'
      : 'Test endpoints may be http or https, and may be on a private network.';
  const endpoint = html`<section class="card" aria-labelledby="ep-h">
    <h2 id="ep-h">${envName} endpoint</h2>
    <p>Every event of ${ctx.env} tasks is POSTed here, signed, and retried on failure (5 attempts over about 2.5 hours). ${guardNote}</p>
    <form method="post" action="${href('/webhooks/endpoint')}" class="row">
      ${csrfField(ctx)}${hidden({ env: ctx.env })}
      <div class="grow">
        <label for="url">Endpoint URL</label>
        <input
          id="url"
          name="url"
          type="url"
          inputmode="url"
          required
          placeholder="https://example.com/webhooks"
          value="${v.urlInput ?? v.endpoint?.url ?? ''}"
        />
      </div>
      <div><button type="submit" class="primary">Save endpoint</button></div>
    </form>
    ${v.endpoint ? html`<p class="small muted">Set ${when(v.endpoint.created_at)}; last changed ${when(v.endpoint.updated_at)}.</p>` : html`<p class="small muted">No endpoint yet: events are kept and can be resent once one is set.</p>`}
  </section>`;

  const secret = html`<section class="card" aria-labelledby="sec-h">
    <h2 id="sec-h">Signing secret</h2>
    <p>
      Verify <code>X-Service-Signature</code> (hex HMAC-SHA256 of the raw body) or the Standard Webhooks headers with this secret
      (<code>SERVICE_WEBHOOK_SECRET</code>).
    </p>
    ${
      v.secret
        ? html`<p>
              <code>whsec_…${v.secret.last4}</code> · version ${v.secret.version} · created ${when(v.secret.created_at)}
              ${v.secret.previous_valid_until ? html`<br /><span class="small">The previous secret still signs too until ${when(v.secret.previous_valid_until)}.</span>` : ''}
            </p>
            ${
              v.revealed
                ? html`<div class="secret">
                    <label class="sr" for="whsec">Signing secret</label>
                    <input id="whsec" type="text" readonly value="${v.revealed}" data-testid="webhook-secret" />
                  </div>`
                : ''
            }
            <div class="actions">
              ${
                v.revealed
                  ? ''
                  : html`<form method="post" action="${href('/webhooks/secret/reveal')}" class="inline">
                      ${csrfField(ctx)}${hidden({ env: ctx.env })}<button type="submit">Reveal secret</button>
                    </form>`
              }
              ${confirmAction(ctx, {
                summary: 'Rotate secret…',
                prompt:
                  'A new secret signs from now on; the current one keeps signing beside it for 24 hours, so receivers can switch without missing events.',
                action: href('/webhooks/secret/rotate'),
                fields: { env: ctx.env },
                button: 'Rotate secret',
              })}
            </div>`
        : html`<p class="muted">No secret yet: one is created with the endpoint.</p>`
    }
  </section>`;

  const test = html`<section class="card" aria-labelledby="test-h">
    <h2 id="test-h">Send a test event</h2>
    <p>
      Sends a signed <code>task.progress</code> event for a made-up task (<code>task_test…</code>, webhook id <code>evt_test_…</code>)
      through the normal delivery path; it appears in the log below.
    </p>
    ${
      v.endpoint
        ? html`<form method="post" action="${href('/webhooks/test')}">
            ${csrfField(ctx)}${hidden({ env: ctx.env })}<button type="submit">Send test event</button>
          </form>`
        : html`<p class="muted">Set an endpoint first.</p>`
    }
  </section>`;

  const log = html`<section class="card" aria-labelledby="log-h">
    <div class="pager">
      <h2 id="log-h">Delivery log</h2>
      <a href="${href('/webhooks', { env: ctx.env })}">Refresh</a>
    </div>
    ${deliveryTable(
      ctx,
      v.deliveries,
      'Newest events first, with every attempt: time, HTTP status and latency. Inspect shows what was sent and what the receiver answered.',
    )}
  </section>`;

  const body = html`<h1>Webhooks <span class="pill ${ctx.env}">${ctx.env}</span></h1>
    <p class="lead">Each environment has its own endpoint and secret. Switch with Test / Live above.</p>
    ${flash(v.flash)}
    ${v.unavailable ? flash({ kind: 'err', title: 'Webhook settings are unavailable', text: ` ${v.unavailable}` }) : html`${endpoint}${secret}${test}${log}`}`;
  return layout(ctx, { title: 'Webhooks', tab: 'webhooks', body });
}

/** The log of events with their attempts (also used on a task's page). */
export function deliveryTable(ctx: DashCtx, deliveries: WebhookDeliveryInfo[] | null, intro: string, o: { showTask?: boolean } = {}): Html {
  if (deliveries === null)
    return html`<p class="muted" role="alert">The delivery log could not be read right now. Try again in a moment.</p>`;
  if (deliveries.length === 0) {
    return empty(
      'No deliveries yet',
      ' Events appear here when tasks complete, fail, wait or report progress, and when you send a test event.',
    );
  }
  const showTask = o.showTask ?? true;
  return html`<p class="small muted">${intro}</p>
    <div class="table-wrap">
      <table class="stack" data-testid="delivery-log">
        <thead>
          <tr>
            <th scope="col">Event</th>
            ${showTask ? html`<th scope="col">Task</th>` : ''}
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col"></th>
          </tr>
        </thead>
        <tbody>
          ${deliveries.map(
            (d) =>
              html`<tr data-event-id="${d.id}">
                <td data-label="Event">
                  <a href="${href(`/webhooks/events/${d.id}`, { env: ctx.env })}"><code>${d.event ?? '—'}</code></a>
                  ${d.test ? html`<span class="pill test">test</span>` : ''}<br /><span class="small muted">${when(d.occurred_at)}</span>
                </td>
                ${
                  showTask
                    ? html`<td data-label="Task">
                        ${d.test ? html`<code class="small">${d.task_id}</code>` : html`<a href="${href(`/tasks/${d.task_id}`, { env: ctx.env })}"><code class="small">${d.task_id}</code></a>`}
                      </td>`
                    : ''
                }
                <td data-label="Status">
                  ${pill(d.status)}${d.next_attempt_at && d.status === 'pending' ? html`<br /><span class="small muted">next ${when(d.next_attempt_at, { short: true })}</span>` : ''}
                </td>
                <td data-label="Attempts">
                  ${
                    d.attempts.length
                      ? html`<ul class="attempts">
                          ${d.attempts.map(
                            (a) =>
                              html`<li>
                                #${a.attempt} ${when(a.at, { short: true })} ·
                                ${a.status_code === null ? html`<span class="pill err">no answer</span>` : pill(a.status_code === 200 ? 'ok' : 'err', String(a.status_code))}
                                · ${a.latency_ms} ms${a.error ? html` · <span class="small muted">${a.error}</span>` : ''}
                              </li>`,
                          )}
                        </ul>`
                      : html`<span class="muted small">none yet</span>`
                  }
                </td>
                <td data-label="">
                  <a class="button" href="${href(`/webhooks/events/${d.id}`, { env: ctx.env })}" aria-label="Inspect ${d.id}">Inspect</a>
                  <form method="post" action="${href('/webhooks/resend')}" class="inline">
                    ${csrfField(ctx)}${hidden({ env: ctx.env, event_id: d.id })}
                    <button type="submit" aria-label="Resend now ${d.id}">Resend now</button>
                  </form>
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}
