import type { WebhookAttemptInfo, WebhookDeliveryInfo } from '@tes/contracts';
import { html, type Html } from '@tes/html';
import { csrfField, flash, hidden, href, layout, pill, when, type DashCtx, type Flash } from '../layout.js';

/**
 * The attempt inspector: one webhook event with the body every attempt sends and, per attempt, the
 * request's headers as sent and the receiver's answer (status, the first 4 KB of its body, latency).
 */
export function deliveryPage(ctx: DashCtx, o: { d: WebhookDeliveryInfo; flash?: Flash | null }): string {
  const d = o.d;
  const bytes = d.body === null || d.body === undefined ? null : new TextEncoder().encode(d.body).length;
  const facts = html`<dl class="facts">
    <dt>Webhook id</dt>
    <dd><code>${d.id}</code></dd>
    <dt>Task</dt>
    <dd>
      ${d.test ? html`<code>${d.task_id}</code> <span class="pill test">test</span>` : html`<a href="${href(`/tasks/${d.task_id}`, { env: ctx.env })}"><code>${d.task_id}</code></a>`}
    </dd>
    <dt>Status</dt>
    <dd data-testid="event-status">
      ${pill(d.status)}${d.status === 'pending' && d.next_attempt_at ? html` <span class="small muted">next attempt ${when(d.next_attempt_at)}</span>` : ''}
    </dd>
    <dt>Occurred</dt>
    <dd>${when(d.occurred_at)}</dd>
    <dt>Attempts</dt>
    <dd>${d.attempts_made}</dd>
    ${
      d.delivered_at
        ? html`<dt>Delivered</dt>
            <dd>${when(d.delivered_at)}</dd>`
        : ''
    }
  </dl>`;
  const resend = html`<form method="post" action="${href('/webhooks/resend')}" class="row">
    ${csrfField(ctx)}${hidden({ env: ctx.env, event_id: d.id })}
    <div><button type="submit" class="primary" aria-label="Resend now ${d.id}">Resend now</button></div>
    <p class="small muted grow">
      A new attempt now, outside the retry schedule, with the same webhook id and body. It still waits for any earlier undelivered event of
      the same task, so your receiver gets a task's events in order.
    </p>
  </form>`;
  const body = html`<section class="card" aria-labelledby="body-h">
    <h2 id="body-h">Request body</h2>
    <p class="small muted">
      ${bytes === null ? '' : `${bytes} bytes, `}the exact bytes every attempt sends and signs (<code>X-Service-Signature</code> is the hex
      HMAC-SHA256 of them).
    </p>
    <pre class="wrap" data-testid="request-body">${d.body ?? ''}</pre>
  </section>`;
  const attempts = d.attempts.length
    ? html`${[...d.attempts].reverse().map((a, i) => attemptCard(a, i === 0))}`
    : html`<p class="muted">No attempt yet.</p>`;
  const page = html`<p>
      <a href="${href('/webhooks', { env: ctx.env })}">← Delivery log</a
      >${d.test ? '' : html` · <a href="${href(`/tasks/${d.task_id}`, { env: ctx.env })}">Task</a>`}
    </p>
    <h1><code>${d.event ?? 'event'}</code></h1>
    ${flash(o.flash)}
    <section class="card" aria-label="Event">${facts}${resend}</section>
    ${body}
    <section class="card" aria-labelledby="att-h">
      <h2 id="att-h">Attempts</h2>
      <p class="small muted">Newest first. Success is exactly HTTP 200 within the timeout; redirects are not followed.</p>
      ${attempts}
    </section>`;
  return layout(ctx, { title: d.event ?? d.id, tab: 'webhooks', body: page, path: `/webhooks/events/${d.id}` });
}

function attemptCard(a: WebhookAttemptInfo, open: boolean): Html {
  const status =
    a.status_code === null
      ? html`<span class="pill err">no answer</span>`
      : pill(a.status_code === 200 ? 'ok' : 'err', String(a.status_code));
  const headers = a.request_headers ? Object.entries(a.request_headers).sort(([x], [y]) => x.localeCompare(y)) : [];
  const r = a.response;
  return html`<details class="attempt" data-attempt="${a.attempt}" ${open ? html`open` : ''}>
    <summary>
      #${a.attempt} · ${when(a.at)} · ${status} · ${a.latency_ms} ms${a.error ? html` · <span class="small muted">${a.error}</span>` : ''}
    </summary>
    <dl class="facts">
      <dt>URL</dt>
      <dd><code>POST ${a.url ?? ''}</code></dd>
      <dt>Latency</dt>
      <dd>${a.latency_ms} ms (until the answer's status)</dd>
    </dl>
    <h3>Request headers</h3>
    ${
      headers.length
        ? html`<div class="table-wrap">
            <table class="stack" data-testid="request-headers">
              <tbody>
                ${headers.map(
                  ([k, v]) =>
                    html`<tr>
                      <th scope="row"><code>${k}</code></th>
                      <td><code class="small">${v}</code></td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p class="small muted">No request was made (${a.error ?? 'nothing sent'}).</p>`
    }
    <h3>Response</h3>
    ${
      r
        ? html`<p class="small muted">
              HTTP ${a.status_code}${r.content_type ? html` · <code>${r.content_type}</code>` : ''} ·
              ${r.truncated ? 'the first 4 KB of the body' : 'the whole body'}
            </p>
            <pre class="wrap" data-testid="response-body">${r.body}</pre>`
        : html`<p class="small muted">No answer${a.error ? `: ${a.error}` : ''}.</p>`
    }
  </details>`;
}
