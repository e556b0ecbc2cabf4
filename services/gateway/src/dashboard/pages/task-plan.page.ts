import type { TaskInspection, TaskTrace } from '@tes/contracts';
import { html, type Html } from '@tes/html';
import { pill, pretty, when } from '../layout.js';
import { maskText, maskValue } from '../redact.js';
import type { TaskView } from '../../domain/task-view.js';

/*
 * The task page's request part: the prompt, where the task stands, and the plan with each step's
 * input as sent to the executor. Credentials in them are masked (redact.ts).
 */

/** Where the task stands and what it waits for, in one sentence (null once it has ended). */
export function stageOf(t: TaskView, ins: TaskInspection, now = Date.now()): { title: string; text: string } | null {
  const step = ins.steps[ins.current_step];
  const name = step ? `step ${ins.current_step + 1} of ${ins.steps.length} (${step.tool}.${step.action})` : '';
  switch (ins.status) {
    case 'pending':
      return {
        title: 'Pending admission',
        text: `The account is at its limit of ${ins.concurrency_limit} running tasks; this one starts when a running task ends (first come, first served).`,
      };
    case 'waiting':
      return {
        title: 'Waiting for connection consent',
        text: `${name ? `${name[0]!.toUpperCase()}${name.slice(1)}` : 'The next step'} needs ${t.user_id ?? 'the end user'}'s ${ins.waiting_on ?? 'service'} connection; the task resumes by itself after consent.`,
      };
    case 'running': {
      if (!step) return { title: 'Running', text: 'Finishing: every planned step has a result.' };
      const since = ins.step_dispatched_at ? Date.parse(ins.step_dispatched_at) : NaN;
      const waited = Number.isNaN(since) ? null : Math.max(0, Math.round((now - since) / 1000));
      const base = `Running ${name}${waited === null ? '' : `, sent ${waited} s ago`}.`;
      if (waited !== null && waited * 1000 > ins.step_timeout_ms) {
        return {
          title: 'Retrying a stalled step',
          text: `${base} No result yet past its ${Math.round(ins.step_timeout_ms / 1000)} s timeout: the orchestrator sends a stalled step again (same idempotency key, so it runs at most once) and fails the task if it stays stalled.`,
        };
      }
      return { title: `Running step ${ins.current_step + 1}`, text: base };
    }
    default:
      return null;
  }
}

export function requestCard(t: TaskView, ins: TaskInspection | null): Html {
  if (!ins) {
    return html`<section class="card" aria-labelledby="req-h">
      <h2 id="req-h">Request</h2>
      <p class="muted" role="alert">
        The prompt and plan could not be read right now (the orchestrator did not answer). Refresh to try again.
      </p>
    </section>`;
  }
  const stage = stageOf(t, ins);
  return html`<section class="card" aria-labelledby="req-h">
    <h2 id="req-h">Request</h2>
    <p class="small muted">
      The prompt as received${ins.mode === 'test' ? ' (mode test: planned, not run)' : ''}; anything that looks like a credential is masked.
    </p>
    <pre class="wrap" data-testid="prompt">${maskText(ins.prompt)}</pre>
    ${stage ? html`<div class="flash info" data-testid="stage"><strong>${stage.title}</strong> ${stage.text}</div>` : ''}
  </section>`;
}

/** The planned steps with their inputs, and each one's state (from the trace and the current step). */
export function planCard(ins: TaskInspection | null, trace: TaskTrace | null): Html | '' {
  if (!ins) return '';
  const stateOf = (i: number): Html => {
    const ran = trace?.steps[i];
    if (ran) return pill(ran.status);
    if (i === ins.current_step && (ins.status === 'running' || ins.status === 'waiting')) return pill(ins.status);
    return html`<span class="muted small">${ins.status === 'pending' || i > ins.current_step ? 'to run' : 'not run'}</span>`;
  };
  return html`<section class="card" aria-labelledby="plan-h">
    <h2 id="plan-h">Plan</h2>
    ${
      ins.steps.length
        ? html`<p class="small muted">
              Each step's input as sent to the executor; <code>{{steps.N.output…}}</code> is filled in from an earlier step's output when
              the step runs. Credentials are masked.
            </p>
            <div class="table-wrap">
              <table class="stack" data-testid="plan">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Step</th>
                    <th scope="col">Input</th>
                    <th scope="col">State</th>
                  </tr>
                </thead>
                <tbody>
                  ${ins.steps.map(
                    (s, i) =>
                      html`<tr data-step="${i + 1}">
                        <td data-label="#">${i + 1}</td>
                        <td data-label="Step"><code>${s.tool}.${s.action}</code></td>
                        <td data-label="Input"><pre class="wrap">${pretty(maskValue(s.input))}</pre></td>
                        <td data-label="State">${stateOf(i)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
        : html`<p class="muted">No plan recorded.</p>`
    }
    ${ins.started_at ? html`<p class="small muted">Started ${when(ins.started_at)}.</p>` : ''}
  </section>`;
}
