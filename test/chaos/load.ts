/**
 * Open-model load for the chaos suite: tasks are scheduled at a fixed rate over several
 * accounts whatever the answers, each with its own `Idempotency-Key` (its ref) and
 * `metadata.ref`. A create that gets no final answer (refused or reset connection,
 * timeout, 5xx, 409 idempotency_key_in_progress) is retried with the same key and body,
 * as a careful client would, until it gets one or `giveUpAfterMs` passes. Every answer is
 * recorded: the ledger decides from these records which tasks were accepted.
 */
import type { Client } from './http.js';

export interface ChaosAccount {
  accountId: string;
  apiKey: string;
  webhookSecret: string;
  label: string;
}

export type JobKind = 'echo' | 'multi' | 'deep' | 'slack';

export interface Job {
  ref: string;
  kind: JobKind;
  account: ChaosAccount;
  body: { prompt: string; metadata: { ref: string }; user_id?: string };
  /** What the task must end as. */
  expect: { status: 'complete' | 'failed'; text?: string; errorCode?: string };
  scenario: string;
  firstSentAt: number;
  /** Every answer, in order: HTTP status (0 = transport failure) and error code if any. */
  answers: { at: number; status: number; code?: string | undefined; error?: string | undefined; ms: number }[];
  outcome: 'in_flight' | 'accepted' | 'rejected' | 'gave_up';
  taskId?: string;
  createdStatus?: string;
}

const RETRYABLE_CODES = new Set(['idempotency_key_in_progress', 'temporarily_unavailable', 'internal_error', 'rate_limit_exceeded']);

/**
 * The chaos suite's mix: 50 % one step, 25 % three steps (two progress webhooks), 15 % a sandbox
 * Slack post for a user, 10 % a workflow over the depth limit (task.failed).
 */
function chaosMix(n: number): JobKind {
  const m = n % 20;
  return m < 10 ? 'echo' : m < 15 ? 'multi' : m < 18 ? 'slack' : 'deep';
}

function jobFor(ref: string, n: number, kind: JobKind, account: ChaosAccount, scenario: string): Job {
  const base = { ref, account, scenario, firstSentAt: 0, answers: [], outcome: 'in_flight' as const };
  switch (kind) {
    case 'echo': {
      const text = `chaos ${ref}`;
      return { ...base, kind, body: { prompt: `Echo "${text}"`, metadata: { ref } }, expect: { status: 'complete', text } };
    }
    case 'multi':
      return { ...base, kind, body: { prompt: 'For each number from 1 to 3, echo it', metadata: { ref } }, expect: { status: 'complete' } };
    case 'slack':
      return {
        ...base,
        kind,
        body: { prompt: `Post "chaos ${ref}" to #eng`, metadata: { ref }, user_id: `user_${n % 7}` },
        expect: { status: 'complete' },
      };
    case 'deep':
      return {
        ...base,
        kind,
        body: { prompt: 'For each number from 1 to 60, echo it', metadata: { ref } },
        expect: { status: 'failed', errorCode: 'workflow_depth_exceeded' },
      };
  }
}

export class LoadGenerator {
  readonly jobs: Job[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private seq = 0;
  private scenario = '';

  constructor(
    private readonly opts: {
      client: Client;
      baseUrl: string;
      accounts: ChaosAccount[];
      ratePerSec: number;
      giveUpAfterMs: number;
      runId: string;
      /** The kind of the n-th job (default: the chaos mix above). */
      mix?: (n: number) => JobKind;
    },
  ) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Starts sending at the fixed rate (open model: the schedule does not wait for answers). */
  start(scenario: string): void {
    if (this.timer) return;
    this.scenario = scenario;
    const t0 = Date.now();
    let sent = 0;
    this.timer = setInterval(() => {
      const due = Math.floor(((Date.now() - t0) / 1000) * this.opts.ratePerSec);
      while (sent < due) {
        sent++;
        this.launch();
      }
    }, 20);
  }

  /** Stops scheduling and waits until every job has its final answer (or gave up). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private launch(): void {
    const n = this.seq++;
    const ref = `${this.opts.runId}-${n}`;
    const account = this.opts.accounts[n % this.opts.accounts.length]!;
    const job = jobFor(ref, n, (this.opts.mix ?? chaosMix)(n), account, this.scenario);
    this.jobs.push(job);
    const p = this.run(job).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async run(job: Job): Promise<void> {
    job.firstSentAt = Date.now();
    const body = JSON.stringify(job.body);
    let delay = 200;
    for (;;) {
      const a = await this.opts.client.send('POST', `${this.opts.baseUrl}/tasks`, {
        headers: {
          authorization: `Bearer ${job.account.apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': job.ref,
        },
        body,
        timeoutMs: 15_000,
      });
      const code = (a.json as { error?: { code?: string } } | undefined)?.error?.code;
      job.answers.push({ at: Date.now(), status: a.status, code, error: a.error, ms: a.ms });
      if (a.status === 201) {
        const created = a.json as { id: string; status: string };
        job.outcome = 'accepted';
        job.taskId = created.id;
        job.createdStatus = created.status;
        return;
      }
      const retryable = a.status === 0 || a.status >= 500 || (code !== undefined && RETRYABLE_CODES.has(code));
      if (!retryable) {
        job.outcome = 'rejected';
        return;
      }
      if (Date.now() - job.firstSentAt > this.opts.giveUpAfterMs) {
        job.outcome = 'gave_up';
        return;
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }
}
