/**
 * The ledger of the chaos suite: what the load generator was told, what the databases
 * hold and what the webhook receiver got must balance.
 *
 * Sources: the load generator's records (every create answer), the orchestrator's `tasks`
 * (the source of truth), the gateway's read model through `GET /v1/tasks/:id`, the
 * dispatcher's `events`, and every request that reached the receiver.
 *
 * It balances when:
 *  1. every create has its final answer, and every accepted task (201) is in `tasks`, with
 *     the ref it was sent with, in a terminal state, the one its prompt must end in (echo
 *     text, workflow_depth_exceeded), with an empty outbox; GET answers the same state;
 *  2. no task is missing or extra: every task in `tasks` belongs to one create (its
 *     `metadata.ref`), one task per ref (an Idempotency-Key retried through a crash never
 *     makes two tasks), and it is the task id the create was answered with;
 *  3. every task event is stored once: the dispatcher holds exactly the events
 *     `evt_<task>_2 .. evt_<task>_<version>` (version 1, `created`, has no webhook and is not
 *     stored), none left pending; the last one is the
 *     terminal webhook (task.complete / task.failed, matching the task) and every webhook
 *     event is `delivered` or `undeliverable`, the others `skipped`;
 *  4. the receiver saw only known events, each `webhook-id` always with the same bytes and
 *     valid signatures (spec header and Standard Webhooks), each `delivered` event answered
 *     200 at least once, and, per task, first successful deliveries in version order; no
 *     task got two different webhook ids for its terminal event.
 *
 * Problems are `unsettled` (may still resolve: something not yet terminal, delivered or
 * relayed) or `violation` (will not resolve by waiting: a duplicate task, a wrong result,
 * a body that changed between retries, a bad signature); both unbalance the ledger. A
 * create the client gave up on (only 5xx or timeouts for its whole patience) is an
 * `availability` problem: reported, counted, but not a loss, so it does not unbalance it
 * (a task made for it anyway is still checked like every other).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from 'mongodb';
import type { Client } from './http.js';
import type { Job } from './load.js';
import type { Hit } from './receiver.js';

export interface Problem {
  /**
   * unsettled: may still resolve by waiting; violation: will not; availability: a create
   * that never got a final answer within the client's patience (not a loss: the ledger
   * still checks the task if one was made, but the API was unavailable too long).
   */
  kind: 'unsettled' | 'violation' | 'availability';
  what: string;
}

export interface LedgerCounts {
  creates: number;
  accepted: number;
  rejected: Record<string, number>;
  gaveUp: number;
  retriedCreates: number;
  createAnswers: Record<string, number>;
  tasks: Record<string, number>;
  createdButNotAcknowledged: number;
  events: Record<string, number>;
  webhookEvents: number;
  delivered: number;
  undeliverable: number;
  receiverRequests: number;
  receiverUniqueIds: number;
  duplicateDeliveries: number;
  idsDeliveredMoreThanOnce: number;
  answered200ButNotDelivered: number;
  apiChecked: number;
}

export interface LedgerReport {
  balanced: boolean;
  problems: Problem[];
  counts: LedgerCounts;
}

export interface LedgerSources {
  jobs: readonly Job[];
  orchestrator: Db;
  dispatcher: Db;
  hits: readonly Hit[];
  client: Client;
  baseUrl: string;
}

interface TaskRow {
  _id: string;
  account_id: string;
  status: string;
  version: number;
  metadata?: { ref?: string };
  outbox?: unknown[];
  result?: Record<string, unknown>;
  error?: { code?: string };
}

interface EventRow {
  _id: string;
  account_id: string;
  task_id: string;
  version: number;
  kind: string;
  event: string | null;
  body: string | null;
  status: string;
  attempts_made: number;
}

const TERMINAL = new Set(['complete', 'failed', 'cancelled']);
const WEBHOOK_OF: Record<string, string> = {
  completed: 'task.complete',
  failed: 'task.failed',
  progress: 'task.progress',
  waiting: 'task.waiting',
};

const inc = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);

function eqHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** Both signatures of a delivery, checked with the account's webhook secret. */
export function signaturesValid(hit: Hit, secret: string): { spec: boolean; standard: boolean } {
  const hex = createHmac('sha256', secret).update(hit.rawBody).digest('hex');
  const specHeader = String(hit.headers['x-service-signature'] ?? '');
  const spec = specHeader.split(',').some((s) => eqHex(s.trim(), hex));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const ts = String(hit.headers['webhook-timestamp'] ?? '');
  const b64 = createHmac('sha256', key)
    .update(`${hit.webhookId ?? ''}.${ts}.${hit.rawBody}`)
    .digest('base64');
  const stdHeader = String(hit.headers['webhook-signature'] ?? '');
  const standard = stdHeader.split(' ').some((s) => s.startsWith('v1,') && eqHex(s.slice(3), b64));
  return { spec, standard };
}

/** Task ids whose GET already showed their final state (terminal states do not change). */
const apiVerified = new WeakMap<readonly Job[], Set<string>>();

export async function computeLedger(src: LedgerSources, opts: { checkApi?: boolean } = {}): Promise<LedgerReport> {
  const problems: Problem[] = [];
  const unsettled = (what: string) => problems.push({ kind: 'unsettled', what });
  const violation = (what: string) => problems.push({ kind: 'violation', what });
  const counts: LedgerCounts = {
    creates: src.jobs.length,
    accepted: 0,
    rejected: {},
    gaveUp: 0,
    retriedCreates: 0,
    createAnswers: {},
    tasks: {},
    createdButNotAcknowledged: 0,
    events: {},
    webhookEvents: 0,
    delivered: 0,
    undeliverable: 0,
    receiverRequests: src.hits.length,
    receiverUniqueIds: 0,
    duplicateDeliveries: 0,
    idsDeliveredMoreThanOnce: 0,
    answered200ButNotDelivered: 0,
    apiChecked: 0,
  };

  // --- 1/2. creates against tasks -------------------------------------------------------
  const tasks = await src.orchestrator
    .collection<TaskRow>('tasks')
    .find({}, { projection: { _id: 1, account_id: 1, status: 1, version: 1, metadata: 1, outbox: 1, result: 1, error: 1 } })
    .toArray();
  const taskById = new Map(tasks.map((t) => [t._id, t]));
  const tasksByRef = new Map<string, TaskRow[]>();
  for (const t of tasks) {
    inc(counts.tasks, t.status);
    const ref = t.metadata?.ref;
    if (!ref) {
      violation(`task ${t._id} has no metadata.ref: created by no request of the load`);
      continue;
    }
    tasksByRef.set(ref, [...(tasksByRef.get(ref) ?? []), t]);
  }
  const jobByRef = new Map(src.jobs.map((j) => [j.ref, j]));
  for (const [ref, list] of tasksByRef) {
    if (list.length > 1) violation(`ref ${ref}: ${list.length} tasks (${list.map((t) => t._id).join(', ')}) for one Idempotency-Key`);
    if (!jobByRef.has(ref)) violation(`task ${list[0]!._id}: ref ${ref} was never sent`);
  }

  for (const job of src.jobs) {
    if (job.answers.length > 1) counts.retriedCreates++;
    for (const a of job.answers)
      inc(counts.createAnswers, a.status === 0 ? 'transport' : a.code ? `${a.status} ${a.code}` : String(a.status));
    const list = tasksByRef.get(job.ref) ?? [];
    if (job.outcome === 'in_flight') {
      unsettled(`create ${job.ref}: no final answer yet`);
      continue;
    }
    if (job.outcome === 'rejected' || job.outcome === 'gave_up') {
      const last = job.answers.at(-1);
      const what = `create ${job.ref} (${job.kind}, ${job.account.label}) ${job.outcome} after ${job.answers.length} answers over ${(last?.at ?? 0) - job.firstSentAt} ms: last ${last?.status} ${last?.code ?? last?.error ?? ''}`;
      if (job.outcome === 'gave_up') {
        counts.gaveUp++;
        problems.push({ kind: 'availability', what });
      } else {
        inc(counts.rejected, String(last?.status));
        violation(what);
      }
      // Made although the client was never told (it saw only 5xx or timeouts): it must still end.
      if (list.length > 0) counts.createdButNotAcknowledged++;
      for (const t of list) if (!TERMINAL.has(t.status)) unsettled(`task ${t._id} (ref ${job.ref}, never acknowledged) is ${t.status}`);
      continue;
    }
    counts.accepted++;
    const t = job.taskId ? taskById.get(job.taskId) : undefined;
    if (!t) {
      violation(`accepted task ${job.taskId} (ref ${job.ref}) is missing from the orchestrator's tasks`);
      continue;
    }
    if (t.metadata?.ref !== job.ref) violation(`task ${t._id}: metadata.ref ${t.metadata?.ref} but it answered ref ${job.ref}`);
    if (t.account_id !== job.account.accountId) violation(`task ${t._id}: account ${t.account_id}, created by ${job.account.accountId}`);
    if (!TERMINAL.has(t.status)) {
      unsettled(`task ${t._id} (${job.kind}, ${job.account.label}) is ${t.status}`);
      continue;
    }
    if (t.status !== job.expect.status)
      violation(
        `task ${t._id} (${job.kind}) ended ${t.status}, expected ${job.expect.status}${t.error ? ` (${JSON.stringify(t.error)})` : ''}`,
      );
    if (job.expect.text !== undefined && t.result?.['text'] !== job.expect.text)
      violation(`task ${t._id}: result ${JSON.stringify(t.result)}, expected text ${job.expect.text}`);
    if (job.expect.errorCode !== undefined && t.error?.code !== job.expect.errorCode)
      violation(`task ${t._id}: error ${JSON.stringify(t.error)}, expected ${job.expect.errorCode}`);
    if ((t.outbox?.length ?? 0) > 0) unsettled(`task ${t._id} is ${t.status} with ${t.outbox?.length} unsent outbox message(s)`);
  }

  // --- 3. events -------------------------------------------------------------------------
  const events = await src.dispatcher
    .collection<EventRow>('events')
    .find({}, { projection: { _id: 1, account_id: 1, task_id: 1, version: 1, kind: 1, event: 1, body: 1, status: 1, attempts_made: 1 } })
    .toArray();
  const eventById = new Map(events.map((e) => [e._id, e]));
  const eventsByTask = new Map<string, EventRow[]>();
  for (const e of events) {
    inc(counts.events, e.status);
    eventsByTask.set(e.task_id, [...(eventsByTask.get(e.task_id) ?? []), e]);
    if (!taskById.has(e.task_id)) violation(`event ${e._id} for task ${e.task_id}, which is not in the orchestrator's tasks`);
    const hook = WEBHOOK_OF[e.kind];
    if (hook) {
      counts.webhookEvents++;
      if (e.event !== hook) violation(`event ${e._id}: kind ${e.kind} stored as ${e.event}`);
      if (e.status === 'delivered') counts.delivered++;
      else if (e.status === 'undeliverable') counts.undeliverable++;
      else if (e.status === 'pending') unsettled(`event ${e._id} (${e.event}) still pending after ${e.attempts_made} attempt(s)`);
      else violation(`event ${e._id} (${e.event}) is ${e.status}`);
    } else if (e.status !== 'skipped') violation(`event ${e._id} of kind ${e.kind} is ${e.status}, expected skipped`);
  }
  for (const t of tasks) {
    if (!TERMINAL.has(t.status)) continue;
    const list = (eventsByTask.get(t._id) ?? []).sort((a, b) => a.version - b.version);
    const versions = list.map((e) => e.version);
    // Version 1 is the task's `created` event, which the dispatcher does not store.
    const expected = Array.from({ length: t.version - 1 }, (_, i) => i + 2);
    if (versions.join() !== expected.join()) {
      const missing = expected.filter((v) => !versions.includes(v));
      const extra = versions.filter((v, i) => v > t.version || versions.indexOf(v) !== i);
      if (missing.length) unsettled(`task ${t._id} (${t.status}, v${t.version}): events missing for version(s) ${missing.join(',')}`);
      if (extra.length) violation(`task ${t._id}: unexpected event version(s) ${extra.join(',')}`);
    }
    for (const e of list) if (e._id !== `evt_${t._id}_${e.version}`) violation(`event ${e._id} has version ${e.version} of ${t._id}`);
    const last = list.at(-1);
    if (last && last.version === t.version && t.status !== 'cancelled') {
      const want = t.status === 'complete' ? 'completed' : 'failed';
      if (last.kind !== want) violation(`task ${t._id} is ${t.status} but its last event (v${last.version}) is ${last.kind}`);
    }
  }

  // --- 4. receiver -----------------------------------------------------------------------
  const secretOf = new Map(src.jobs.map((j) => [j.account.accountId, j.account.webhookSecret]));
  const hitsById = new Map<string, Hit[]>();
  for (const h of src.hits) {
    if (!h.webhookId) {
      violation(`a delivery without webhook-id: ${h.rawBody.slice(0, 120)}`);
      continue;
    }
    hitsById.set(h.webhookId, [...(hitsById.get(h.webhookId) ?? []), h]);
  }
  counts.receiverUniqueIds = hitsById.size;
  counts.duplicateDeliveries = src.hits.length - hitsById.size;
  const terminalIdsOfTask = new Map<string, Set<string>>();
  for (const [id, list] of hitsById) {
    if (list.length > 1) counts.idsDeliveredMoreThanOnce++;
    const e = eventById.get(id);
    if (!e) {
      violation(`webhook-id ${id} reached the receiver but is not in the dispatcher's events`);
      continue;
    }
    const bodies = new Set(list.map((h) => h.rawBody));
    if (bodies.size > 1) violation(`webhook-id ${id} was delivered with ${bodies.size} different bodies`);
    if (e.body !== null && !bodies.has(e.body)) violation(`webhook-id ${id}: the receiver got other bytes than the stored body`);
    const secret = secretOf.get(e.account_id);
    for (const h of list) {
      if (!secret) break;
      const sig = signaturesValid(h, secret);
      if (!sig.spec || !sig.standard) {
        violation(
          `webhook-id ${id}: invalid signature (X-Service-Signature ${sig.spec ? 'ok' : 'bad'}, webhook-signature ${sig.standard ? 'ok' : 'bad'})`,
        );
        break;
      }
    }
    let body: { event?: string; task_id?: string } = {};
    try {
      body = JSON.parse(list[0]!.rawBody) as typeof body;
    } catch {
      violation(`webhook-id ${id}: body is not JSON`);
    }
    if (body.task_id !== e.task_id || body.event !== e.event)
      violation(`webhook-id ${id}: body says ${body.event} of ${body.task_id}, event is ${e.event} of ${e.task_id}`);
    if (e.event === 'task.complete' || e.event === 'task.failed') {
      const set = terminalIdsOfTask.get(e.task_id) ?? new Set<string>();
      set.add(id);
      terminalIdsOfTask.set(e.task_id, set);
    }
    const ok = list.some((h) => h.answered === 200);
    if (e.status === 'delivered' && !ok) violation(`event ${id} is delivered but the receiver never answered it 200`);
    if (ok && e.status !== 'delivered' && e.status !== 'pending') counts.answered200ButNotDelivered++;
  }
  for (const e of events) {
    if (e.status === 'delivered' && !hitsById.has(e._id)) violation(`event ${e._id} is delivered but never reached the receiver`);
  }
  for (const [task, ids] of terminalIdsOfTask) {
    if (ids.size > 1) violation(`task ${task}: terminal webhook delivered under ${ids.size} ids (${[...ids].join(', ')})`);
  }
  // Per task, the first 200 of each delivered event comes in version order.
  for (const [task, list] of eventsByTask) {
    const firstOk = list
      .filter((e) => e.status === 'delivered')
      .sort((a, b) => a.version - b.version)
      .map((e) => ({
        v: e.version,
        at: Math.min(...(hitsById.get(e._id) ?? []).filter((h) => h.answered === 200).map((h) => h.receivedAt)),
      }));
    for (let i = 1; i < firstOk.length; i++) {
      if (firstOk[i]!.at < firstOk[i - 1]!.at) violation(`task ${task}: v${firstOk[i]!.v} was delivered before v${firstOk[i - 1]!.v}`);
    }
  }

  // --- 1. the read model through the API (only once the databases balance) ----------------
  if (opts.checkApi && problems.every((p) => p.kind === 'availability')) {
    let verified = apiVerified.get(src.jobs);
    if (!verified) apiVerified.set(src.jobs, (verified = new Set()));
    const todo = src.jobs.filter((j) => j.outcome === 'accepted' && j.taskId && !verified.has(j.taskId));
    for (let i = 0; i < todo.length; i += 16) {
      await Promise.all(
        todo.slice(i, i + 16).map(async (job) => {
          const id = job.taskId!;
          const t = taskById.get(id)!;
          const a = await src.client.send('GET', `${src.baseUrl}/tasks/${id}`, {
            headers: { authorization: `Bearer ${job.account.apiKey}` },
            timeoutMs: 10_000,
          });
          const view = a.json as { status?: string; result?: unknown; error?: { code?: string }; metadata?: { ref?: string } } | undefined;
          if (a.status !== 200) return unsettled(`GET ${id}: ${a.status} ${a.error ?? a.text.slice(0, 120)}`);
          if (view?.status !== t.status) return unsettled(`GET ${id}: ${view?.status}, the orchestrator says ${t.status}`);
          if (view.metadata?.ref !== job.ref) violation(`GET ${id}: metadata ${JSON.stringify(view.metadata)}`);
          if (t.status === 'complete' && JSON.stringify(view.result) !== JSON.stringify(t.result))
            violation(`GET ${id}: result ${JSON.stringify(view.result)} differs from the orchestrator's`);
          if (t.status === 'failed' && view.error?.code !== t.error?.code)
            violation(`GET ${id}: error ${JSON.stringify(view.error)} differs from the orchestrator's`);
          verified.add(id);
        }),
      );
    }
    counts.apiChecked = verified.size;
  }

  return { balanced: problems.every((p) => p.kind === 'availability'), problems, counts };
}

/**
 * Waits for quiescence: recomputes the ledger until it balances (the API is checked once
 * the databases do) or `timeoutMs` passes; returns the last report either way.
 */
export async function settleLedger(src: LedgerSources, timeoutMs: number): Promise<LedgerReport & { waitedMs: number }> {
  const t0 = Date.now();
  let report: LedgerReport;
  for (;;) {
    report = await computeLedger(src, { checkApi: true }).catch((err: unknown) => ({
      balanced: false,
      problems: [{ kind: 'unsettled' as const, what: `ledger read failed: ${String(err)}` }],
      counts: {} as LedgerCounts,
    }));
    // Violations and give-ups do not go away by waiting: stop as soon as nothing else is left.
    if (report.problems.every((p) => p.kind !== 'unsettled') || Date.now() - t0 > timeoutMs) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { ...report, waitedMs: Date.now() - t0 };
}

/** A short text of a report's problems for an assertion message. */
export function describeProblems(report: LedgerReport, max = 25): string {
  const byKind = (k: Problem['kind']) => report.problems.filter((p) => p.kind === k).map((p) => p.what);
  const lines = [
    ...byKind('violation').map((w) => `violation: ${w}`),
    ...byKind('unsettled').map((w) => `unsettled: ${w}`),
    ...byKind('availability').map((w) => `availability: ${w}`),
  ];
  return `${report.problems.length} problem(s)${lines.length > max ? `, first ${max}` : ''}:\n  ${lines.slice(0, max).join('\n  ')}`;
}
