import type { Logger } from '@tes/logger';
import type { DeliveryAttemptDoc } from './attempt.js';
import type { AttemptStore, ClaimStore, DeliveryConfig, EventStore, PendingStore, SendResult, WebhookSender } from './ports.js';
import { afterFailure, type RetryPolicy } from './retry-schedule.js';
import { signingSecrets } from './secret.js';
import { signDelivery } from './signature.js';
import type { EventDoc, PendingDoc } from './stored-event.js';

export interface DeliverDeps {
  events: EventStore;
  pending: PendingStore;
  attempts: AttemptStore;
  claims: ClaimStore;
  config: DeliveryConfig;
  sender: WebhookSender;
  policy: RetryPolicy;
  timeoutMs: number;
  /** A claim older than this is abandoned: timeout + margin. */
  leaseMs: number;
  /** Names this replica in the claims it inserts. */
  holder: string;
  logger: Logger;
  /** Test-only crash points (DISPATCHER_CRASH_POINT, see crash-point.ts); undefined in service. */
  checkpoint?: ((point: DeliveryStep) => void) | undefined;
}

/** The steps of an attempt where the crash tests stop a replica. */
type DeliveryStep = 'before_send' | 'after_response' | 'after_record';

export type AttemptOutcome =
  /** Another replica holds this attempt's claim (until `heldUntil`). */
  | { kind: 'held'; heldUntil: Date | null }
  /** The event moved on since it was read (another replica finished the attempt). */
  | { kind: 'stale' }
  /**
   * The attempt ran (or a dead holder's recorded outcome is applied); the event's new status.
   * The outcome is durable (recorded) when this is returned; `finishing` moves the event on
   * (final state and pending document removed, or the retry scheduled) and may still be under way.
   */
  | { kind: 'done'; status: FinalStatus | 'pending'; terminal: boolean; finishing: Promise<void> };

type FinalStatus = 'delivered' | 'undeliverable' | 'no_endpoint';

/** An event's state after attempt n. */
interface NextState {
  status: FinalStatus | 'pending';
  attempts_made: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
}

/**
 * Performs the next attempt of a pending event, in this order, so that a process killed at
 * any point loses nothing and at worst repeats a delivery (same webhook-id):
 * 1. claim attempt n with an insert (`${event_id}:${n}`, or a takeover once the claim expired);
 *    a takeover re-reads the pending document (still at n-1 attempts, or it stops) and applies
 *    attempt n's recorded outcome, if the dead holder recorded one, without sending again;
 * 2. sign and POST;
 * 3. insert the attempt record, which carries the event's next state (one insert wins: a slow
 *    holder whose claim was taken over changes nothing);
 * 4. final state: insert it into `events`, then delete the pending document; a retry: update
 *    the pending document (attempts, next time).
 * The plain claim needs no re-read: attempt n is claimed by one insert only, so nobody else can
 * have moved the event past n-1 attempts since the caller read it.
 */
export async function attemptDelivery(
  candidate: PendingDoc,
  deps: DeliverDeps,
  options: { suspect?: boolean } = {},
): Promise<AttemptOutcome> {
  const n = candidate.attempts_made + 1;
  const claim = await deps.claims.acquire(candidate.event_id, n, deps.holder, deps.leaseMs, { suspect: options.suspect ?? false });
  if (!claim.won) return { kind: 'held', heldUntil: claim.heldUntil };
  const log = deps.logger.child({ event_id: candidate.event_id, task_id: candidate.task_id, attempt: n });

  let event = candidate;
  if (claim.takeover) {
    log.warn('attempt claim expired, taken over', { claim_id: claim.id });
    const current = await deps.pending.get(candidate.event_id);
    if (!current || current.attempts_made !== n - 1) {
      // A later schedule exists (this document was left behind by a crash between the two writes of a retry): drop it.
      if (current && current._id !== candidate._id) await deps.pending.remove(candidate);
      return { kind: 'stale' };
    }
    event = current;
    const recorded = await deps.attempts.get(event.event_id, n);
    if (recorded) return finish(event, stateAfter(event, recorded, deps.policy), deps, log);
  }

  const endpoint = await deps.config.endpoint(event.account_id, event.environment);
  if (!endpoint) {
    log.info('no webhook endpoint at delivery time: event kept as no_endpoint');
    return finish(
      event,
      {
        status: 'no_endpoint',
        attempts_made: n - 1,
        next_attempt_at: null,
        delivered_at: null,
        last_status_code: event.last_status_code,
        last_error: 'no webhook endpoint configured',
      },
      deps,
      log,
    );
  }

  const startedAt = new Date();
  const secrets = signingSecrets(await deps.config.secretVersions(event.account_id, event.environment));
  let result: SendResult;
  if (secrets.length === 0) {
    result = { ok: false, status_code: null, latency_ms: 0, error: 'no signing secret for this environment' };
  } else {
    const headers = signDelivery({ secrets, eventId: event.event_id, rawBody: event.body, timestamp: Math.floor(Date.now() / 1000) });
    deps.checkpoint?.('before_send');
    result = await deps.sender.send({
      url: endpoint.url,
      environment: event.environment,
      body: event.body,
      headers: { ...headers },
      timeoutMs: deps.timeoutMs,
    });
    deps.checkpoint?.('after_response');
  }

  const finishedAt = new Date();
  const next = decide(event, n, result, finishedAt, deps.policy);
  const attempt: DeliveryAttemptDoc = {
    _id: `${event.event_id}:${n}`,
    event_id: event.event_id,
    task_id: event.task_id,
    account_id: event.account_id,
    environment: event.environment,
    attempt: n,
    url: endpoint.url,
    started_at: startedAt,
    finished_at: finishedAt,
    ok: result.ok,
    status_code: result.status_code,
    latency_ms: result.latency_ms,
    error: result.error,
    ...(result.request_headers ? { request_headers: result.request_headers } : {}),
    ...(result.response ? { response: result.response } : {}),
    status_after: next.status,
    next_attempt_at: next.next_attempt_at,
    schedule_base: event.schedule_base,
  };
  if (!(await deps.attempts.recordBatched(attempt))) {
    // A slow holder whose claim was taken over: the other one's outcome stands.
    log.warn('attempt outcome recorded by another holder; this one dropped');
    return { kind: 'stale' };
  }
  deps.checkpoint?.('after_record');
  return finish(event, next, deps, log, result.latency_ms);
}

/** The event's state after attempt n with this result. */
function decide(
  event: PendingDoc,
  n: number,
  result: SendResult,
  finishedAt: Date,
  policy: RetryPolicy,
): NextState & { status: 'delivered' | 'pending' | 'undeliverable' } {
  const base = { attempts_made: n, last_status_code: result.status_code, last_error: result.error };
  if (result.ok) return { ...base, status: 'delivered', next_attempt_at: null, delivered_at: finishedAt };
  const next = afterFailure(policy, n - event.schedule_base, finishedAt);
  return next.kind === 'retry'
    ? { ...base, status: 'pending', next_attempt_at: next.at, delivered_at: null }
    : { ...base, status: 'undeliverable', next_attempt_at: null, delivered_at: null };
}

/** The state a recorded attempt left the event in (records from before `status_after` was kept: derived). */
function stateAfter(event: PendingDoc, a: DeliveryAttemptDoc, policy: RetryPolicy): NextState {
  if (a.status_after) {
    return {
      status: a.status_after,
      attempts_made: a.attempt,
      next_attempt_at: a.next_attempt_at ?? null,
      delivered_at: a.ok ? a.finished_at : null,
      last_status_code: a.status_code,
      last_error: a.error,
    };
  }
  return decide(
    event,
    a.attempt,
    { ok: a.ok, status_code: a.status_code, latency_ms: a.latency_ms, error: a.error },
    a.finished_at,
    policy,
  );
}

/**
 * Moves the event on, once its outcome is decided: its final state into `events` then the
 * pending document out, or the retry scheduled on the pending document. These writes do not
 * hold the delivery slot (the outcome is recorded already); if the process dies before they
 * are done, whoever takes the attempt over after the lease applies the recorded outcome.
 */
function finish(event: PendingDoc, next: NextState, deps: DeliverDeps, log: Logger, latencyMs?: number): AttemptOutcome {
  const meta = { status_code: next.last_status_code, ...(latencyMs !== undefined ? { latency_ms: latencyMs } : {}) };
  if (next.status === 'delivered') log.info('webhook delivered', meta);
  else if (next.status === 'undeliverable') log.warn('webhook undeliverable: every attempt failed', { ...meta, error: next.last_error });
  if (next.status === 'pending') {
    const at = next.next_attempt_at ?? new Date();
    log.info('webhook attempt failed, retry scheduled', { ...meta, error: next.last_error, next_attempt_at: at.toISOString() });
    const finishing = deps.pending.reschedule(
      event,
      { attempts_made: next.attempts_made, next_attempt_at: at, last_status_code: next.last_status_code, last_error: next.last_error },
      deps.holder,
    );
    return { kind: 'done', status: 'pending', terminal: false, finishing };
  }
  const { lane: _lane, tag: _tag, event_id: eventId, ...fields } = event;
  const final: EventDoc = { ...fields, _id: eventId, ...next, status: next.status, next_attempt_at: null, updated_at: new Date() };
  // Insert first, delete second: at every moment one of the two holds the event.
  const finishing = deps.events.finalize(final).then(() => deps.pending.remove(event));
  return { kind: 'done', status: next.status, terminal: true, finishing };
}
