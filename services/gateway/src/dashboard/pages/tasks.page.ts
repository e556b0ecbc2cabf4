import { TASK_STATUSES, type TaskInspection, type TaskTrace, type WaitingData, type WebhookDeliveryInfo } from '@tes/contracts';
import { html } from '@tes/html';
import { empty, flash, href, layout, pill, pretty, span, when, type DashCtx, type Flash } from '../layout.js';
import type { TaskView } from '../../domain/task-view.js';
import { planCard, requestCard } from './task-plan.page.js';
import { deliveryTable } from './webhooks.page.js';

export interface TaskFilters {
  status: string;
  user_id: string;
  limit: number;
  offset: number;
}

export function tasksPage(ctx: DashCtx, o: { filters: TaskFilters; rows: TaskView[]; hasMore: boolean; flash?: Flash | null }): string {
  const f = o.filters;
  const filtered = f.status !== '' || f.user_id !== '';
  const pageParams = (offset: number) => ({
    env: ctx.env,
    status: f.status,
    user_id: f.user_id,
    limit: f.limit === 20 ? undefined : f.limit,
    offset: offset || undefined,
  });
  const form = html`<form method="get" action="${href('/tasks')}" class="row" role="search" aria-label="Filter tasks">
    <input type="hidden" name="env" value="${ctx.env}" />
    <div>
      <label for="status">Status</label>
      <select id="status" name="status">
        <option value="">Any status</option>
        ${TASK_STATUSES.map((s) => html`<option value="${s}" ${f.status === s ? html`selected` : ''}>${s}</option>`)}
      </select>
    </div>
    <div class="grow">
      <label for="user_id">End user (user_id)</label>
      <input id="user_id" name="user_id" type="text" value="${f.user_id}" placeholder="user_42" maxlength="256" />
    </div>
    <div>
      <label for="limit">Per page</label>
      <select id="limit" name="limit">
        ${[10, 20, 50, 100].map((n) => html`<option value="${n}" ${f.limit === n ? html`selected` : ''}>${n}</option>`)}
      </select>
    </div>
    <div class="actions">
      <button type="submit" class="primary">Filter</button
      >${filtered ? html`<a class="button" href="${href('/tasks', { env: ctx.env })}">Clear</a>` : ''}
    </div>
  </form>`;
  const table = o.rows.length
    ? html`<div class="table-wrap">
          <table class="stack" data-testid="tasks">
            <thead>
              <tr>
                <th scope="col">Task</th>
                <th scope="col">Status</th>
                <th scope="col">Tool</th>
                <th scope="col">Created</th>
                <th scope="col">Completed</th>
              </tr>
            </thead>
            <tbody>
              ${o.rows.map(
                (t) =>
                  html`<tr>
                    <td data-label="Task">
                      <a href="${href(`/tasks/${t._id}`, { env: ctx.env })}"><code>${t._id}</code></a>
                    </td>
                    <td data-label="Status">${pill(t.status)}</td>
                    <td data-label="Tool">${t.tool}</td>
                    <td data-label="Created">${when(t.created_at)}</td>
                    <td data-label="Completed">${t.status === 'complete' ? when(t.completed_at) : html`<span class="muted">—</span>`}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>
        <nav class="pager" aria-label="Pages">
          <span>${f.offset > 0 ? html`<a href="${href('/tasks', pageParams(Math.max(0, f.offset - f.limit)))}">← Newer</a>` : ''}</span>
          <span class="small muted">Tasks ${f.offset + 1}–${f.offset + o.rows.length}</span>
          <span>${o.hasMore ? html`<a href="${href('/tasks', pageParams(f.offset + f.limit))}">Older →</a>` : ''}</span>
        </nav>`
    : filtered || f.offset > 0
      ? empty('No task matches these filters', html` <a href="${href('/tasks', { env: ctx.env })}">Show all ${ctx.env} tasks</a>.`)
      : empty(`No ${ctx.env} task yet`, html` Create one with a ${ctx.env} key: <code>POST /v1/tasks</code>.`);
  const body = html`<h1>Tasks <span class="pill ${ctx.env}">${ctx.env}</span></h1>
    <p class="lead">Newest first. Tasks of test and live keys are separate; switch with Test / Live above.</p>
    ${flash(o.flash)}
    <section class="card">${form}</section>
    <section class="card" aria-label="Task list">${table}</section>`;
  return layout(ctx, { title: 'Tasks', tab: 'tasks', body });
}

export function taskPage(
  ctx: DashCtx,
  o: {
    task: TaskView;
    trace: TaskTrace | null;
    traceError?: string;
    deliveries: WebhookDeliveryInfo[] | null;
    waiting?: WaitingData;
    /** The prompt, plan and current step; null when the orchestrator did not answer. */
    inspection?: TaskInspection | null;
  },
): string {
  const t = o.task;
  const w = o.waiting;
  const facts = html`<dl class="facts">
    <dt>Status</dt>
    <dd>${pill(t.status)}</dd>
    <dt>Tool</dt>
    <dd>${t.tool}</dd>
    <dt>Created</dt>
    <dd>${when(t.created_at)}</dd>
    ${
      t.status === 'complete' && t.completed_at
        ? html`<dt>Completed</dt>
            <dd>${when(t.completed_at)}</dd>`
        : ''
    }
    ${
      t.status === 'failed' && t.failed_at
        ? html`<dt>Failed</dt>
            <dd>${when(t.failed_at)}</dd>`
        : ''
    }
    ${
      t.status === 'cancelled' && t.cancelled_at
        ? html`<dt>Cancelled</dt>
            <dd>${when(t.cancelled_at)}</dd>`
        : ''
    }
    <dt>End user</dt>
    <dd>
      ${t.user_id ? html`<a href="${href('/connections', { env: ctx.env, user_id: t.user_id })}"><code>${t.user_id}</code></a>` : html`<span class="muted">none</span>`}
    </dd>
    <dt>Metadata</dt>
    <dd>${Object.keys(t.metadata ?? {}).length ? html`<pre>${pretty(t.metadata)}</pre>` : html`<span class="muted">none</span>`}</dd>
  </dl>`;
  const outcome =
    t.status === 'complete'
      ? html`<section class="card" aria-labelledby="res-h">
          <h2 id="res-h">Result</h2>
          <pre data-testid="result">${pretty(t.result ?? {})}</pre>
        </section>`
      : t.status === 'waiting' && w
        ? html`<section class="card" aria-labelledby="wait-h" data-testid="waiting">
            <h2 id="wait-h">Waiting for consent</h2>
            <p>${w.message}</p>
            <dl class="facts">
              <dt>Reason</dt>
              <dd><code>${w.reason}</code></dd>
              <dt>Service</dt>
              <dd>${w.service}</dd>
              <dt>End user</dt>
              <dd><code>${t.user_id ?? ''}</code></dd>
              <dt>Consent link</dt>
              <dd><code class="small" data-testid="auth-url">${w.auth_url}</code></dd>
            </dl>
            <p class="small muted">
              Show this link only to the end user above, signed in to your application: whoever continues through it connects their
              ${w.service} account to that user. It works once and expires within minutes; this page and
              <code>GET /v1/tasks/:id</code> issue a fresh one on every read. The task resumes by itself after consent.
            </p>
          </section>`
        : t.status === 'failed' && t.error
          ? html`<section class="card" aria-labelledby="err-h">
              <h2 id="err-h">Error</h2>
              <dl class="facts">
                <dt>Code</dt>
                <dd><code>${t.error.code}</code></dd>
                <dt>Message</dt>
                <dd>${t.error.message}</dd>
                <dt>Tool</dt>
                <dd>${t.error.tool}</dd>
                <dt>Recoverable</dt>
                <dd>${t.error.recoverable ? 'yes' : 'no'}</dd>
                ${
                  t.error.suggestion
                    ? html`<dt>Suggestion</dt>
                        <dd>${t.error.suggestion}</dd>`
                    : ''
                }
              </dl>
            </section>`
          : html`<section class="card">
              <h2>Result</h2>
              <p class="muted">
                ${
                  t.status === 'waiting'
                    ? 'Waiting for the end user to authorize a service; the task resumes by itself after consent.'
                    : t.status === 'cancelled'
                      ? 'Cancelled: no result.'
                      : 'Not finished yet. Refresh to see progress.'
                }
              </p>
            </section>`;
  const total = o.trace?.total_duration_ms ?? 0;
  let offset = 0;
  const trace = o.trace
    ? o.trace.steps.length
      ? html`<p class="small muted">
            ${o.trace.steps.length} step${o.trace.steps.length === 1 ? '' : 's'}, ${total} ms in total. Steps run one after another.
          </p>
          <div class="table-wrap">
            <table class="stack timeline" data-testid="trace">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Step</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="num">Duration</th>
                  <th scope="col">Timeline</th>
                </tr>
              </thead>
              <tbody>
                ${o.trace.steps.map((s, i) => {
                  const start = total > 0 ? offset / total : i / o.trace!.steps.length;
                  const length = total > 0 ? s.duration_ms / total : 1 / o.trace!.steps.length;
                  offset += s.duration_ms;
                  return html`<tr>
                    <td data-label="#">${i + 1}</td>
                    <td data-label="Step">
                      <code>${s.tool}.${s.action}</code>${s.note ? html`<br /><span class="small muted">${s.note}</span>` : ''}
                    </td>
                    <td data-label="Status">${pill(s.status)}</td>
                    <td data-label="Duration" class="num">${s.duration_ms} ms</td>
                    <td data-label="Timeline" class="bar">
                      ${span(start, length, s.status, `${s.tool}.${s.action}: starts at ${Math.round(start * total)} ms, lasts ${s.duration_ms} ms`)}
                    </td>
                  </tr>`;
                })}
              </tbody>
            </table>
          </div>`
      : empty(
          'No step has run yet',
          t.status === 'pending' ? ' The task waits for a free slot (concurrent-task limit).' : ' Steps appear as they finish.',
        )
    : html`<p class="muted" role="alert">${o.traceError ?? 'The trace could not be read right now.'}</p>`;
  const body = html`<p><a href="${href('/tasks', { env: ctx.env })}">← All ${ctx.env} tasks</a></p>
    <h1><code>${t._id}</code></h1>
    <section class="card" aria-label="Task">${facts}</section>
    ${requestCard(t, o.inspection ?? null)} ${outcome} ${planCard(o.inspection ?? null, o.trace)}
    <section class="card" aria-labelledby="trace-h">
      <h2 id="trace-h">Trace</h2>
      ${trace}
    </section>
    <section class="card" aria-labelledby="del-h">
      <h2 id="del-h">Webhook deliveries</h2>
      ${deliveryTable(ctx, o.deliveries, 'The events of this task in order, with every attempt.', { showTask: false })}
    </section>`;
  return layout(ctx, { title: t._id, tab: 'tasks', body, path: `/tasks/${t._id}` });
}
