import { html } from '@tes/html';
import { href, layout, meter, type DashCtx } from '../layout.js';

export interface UsageView {
  plan: string;
  requestsPerMinute: number;
  requestsThisMinute: number;
  resetsInS: number;
  concurrentLimit: number;
  running: number;
  pending: number;
  waiting: number;
}

export function usagePage(ctx: DashCtx, u: UsageView): string {
  const reqLeft = Math.max(0, u.requestsPerMinute - u.requestsThisMinute);
  const body = html`<h1>Usage</h1>
    <p class="lead">Limits are per account, shared by all its keys (test and live). The dashboard itself does not count against them.</p>
    <div class="grid">
      <section class="card" aria-labelledby="rpm-h" data-testid="usage-requests">
        <h2 id="rpm-h">Requests this minute</h2>
        <div class="stat">${u.requestsThisMinute} <small>/ ${u.requestsPerMinute}</small></div>
        ${meter(u.requestsThisMinute, u.requestsPerMinute, `${u.requestsThisMinute} of ${u.requestsPerMinute} requests this minute`)}
        <p class="small">
          ${reqLeft} left; the window resets in ${u.resetsInS} s. Over the limit the API answers <code>429 rate_limit_exceeded</code> with
          <code>Retry-After</code>.
        </p>
      </section>
      <section class="card" aria-labelledby="cc-h" data-testid="usage-concurrency">
        <h2 id="cc-h">Running tasks</h2>
        <div class="stat">${u.running} <small>/ ${u.concurrentLimit}</small></div>
        ${meter(u.running, u.concurrentLimit, `${u.running} of ${u.concurrentLimit} concurrent tasks`)}
        <p class="small">
          ${u.pending} pending (waiting for a free slot), ${u.waiting} waiting for an end user's consent (they hold no slot).
        </p>
      </section>
    </div>
    <section class="card">
      <h2>Plan</h2>
      <p>
        <strong>${u.plan}</strong>: ${u.requestsPerMinute} requests per minute, ${u.concurrentLimit} concurrent tasks. Limits are changed by
        your operator.
      </p>
      <p><a href="${href('/usage', { env: ctx.env })}">Refresh</a></p>
    </section>`;
  return layout(ctx, { title: 'Usage', tab: 'usage', body });
}
