import type { Logger } from '@tes/logger';
import type { AttemptClaimRepository } from '../store/attempt-claim.repository.js';
import type { DeliveryAttemptDoc, DeliveryAttemptRepository } from '../store/delivery-attempt.repository.js';
import type { EndpointRepository } from '../store/endpoint.repository.js';
import type { EventDoc, EventRepository, OutcomeUpdate } from '../store/event.repository.js';
import type { SecretRepository } from '../store/secret.repository.js';
import type { SendRequest, SendResult } from '../delivery/http-sender.js';
import { afterFailure, type RetryPolicy } from './retry-schedule.js';
import { signingSecrets } from './secret.js';
import { signDelivery } from './signature.js';

export interface DeliverDeps {
  events: EventRepository;
  attempts: DeliveryAttemptRepository;
  claims: AttemptClaimRepository;
  endpoints: EndpointRepository;
  secrets: SecretRepository;
  sender: { send(req: SendRequest): Promise<SendResult> };
  policy: RetryPolicy;
  timeoutMs: number;
  /** A claim older than this is abandoned: timeout + margin. */
  leaseMs: number;
  /** Names this replica in the claims it inserts. */
  holder: string;
  logger: Logger;
}

export type AttemptOutcome =
  /** Another replica holds this attempt's claim (until `heldUntil`). */
  | { kind: 'held'; heldUntil: Date | null }
  /** The event moved on since it was read (another replica finished the attempt). */
  | { kind: 'stale' }
  /** The attempt ran (or a dead holder's recorded outcome was applied); the event's new status. */
  | { kind: 'done'; status: 'delivered' | 'pending' | 'undeliverable' | 'no_endpoint'; terminal: boolean };

/**
 * Performs the next attempt of a pending event, in this order, so that a process killed at
 * any point loses nothing and at worst repeats a delivery (same webhook-id):
 * 1. claim attempt n with an insert (`${event_id}:${n}`, or a takeover once the claim expired);
 * 2. re-read the event: it must still be pending with n-1 attempts;
 * 3. if attempt n's outcome is already recorded (the holder died before updating the event),
 *    apply it without sending again;
 * 4. sign and POST; 5. insert the attempt record (one insert wins); 6. update the event.
 */
export async function attemptDelivery(candidate: EventDoc, deps: DeliverDeps): Promise<AttemptOutcome> {
  const n = candidate.attempts_made + 1;
  const claim = await deps.claims.acquire(candidate._id, n, deps.holder, deps.leaseMs);
  if (!claim.won) return { kind: 'held', heldUntil: claim.heldUntil };

  const event = await deps.events.get(candidate._id);
  if (!event || event.status !== 'pending' || event.attempts_made !== n - 1 || event.body === null) return { kind: 'stale' };
  const log = deps.logger.child({ event_id: event._id, task_id: event.task_id, attempt: n });
  if (claim.takeover) log.warn('attempt claim expired, taken over', { claim_id: claim.id });

  const recorded = await deps.attempts.get(event._id, n);
  if (recorded) return applyOutcome(event, recorded, deps, log);

  const endpoint = await deps.endpoints.get(event.account_id, event.environment);
  if (!endpoint) {
    if (!(await deps.events.markNoEndpoint(event._id, n - 1))) return { kind: 'stale' };
    log.info('no webhook endpoint at delivery time: event kept as no_endpoint');
    await wakeSuccessor(event, deps);
    return { kind: 'done', status: 'no_endpoint', terminal: true };
  }

  const startedAt = new Date();
  const secrets = signingSecrets(await deps.secrets.latest(event.account_id, event.environment));
  let result: SendResult;
  if (secrets.length === 0) {
    result = { ok: false, status_code: null, latency_ms: 0, error: 'no signing secret for this environment' };
  } else {
    const headers = signDelivery({ secrets, eventId: event._id, rawBody: event.body, timestamp: Math.floor(Date.now() / 1000) });
    result = await deps.sender.send({
      url: endpoint.url,
      environment: event.environment,
      body: event.body,
      headers: { ...headers },
      timeoutMs: deps.timeoutMs,
    });
  }

  const attempt: DeliveryAttemptDoc = {
    _id: `${event._id}:${n}`,
    event_id: event._id,
    task_id: event.task_id,
    account_id: event.account_id,
    environment: event.environment,
    attempt: n,
    url: endpoint.url,
    started_at: startedAt,
    finished_at: new Date(),
    ok: result.ok,
    status_code: result.status_code,
    latency_ms: result.latency_ms,
    error: result.error,
  };
  if (!(await deps.attempts.record(attempt))) {
    // A slow holder whose claim was taken over: the other one's outcome stands.
    log.warn('attempt outcome recorded by another holder; this one dropped');
    return { kind: 'stale' };
  }
  return applyOutcome(event, attempt, deps, log);
}

/** Moves the event on after a recorded attempt; when the event is done, wakes its task's next one. */
async function applyOutcome(event: EventDoc, attempt: DeliveryAttemptDoc, deps: DeliverDeps, log: Logger): Promise<AttemptOutcome> {
  const base = { attempts_made: attempt.attempt, last_status_code: attempt.status_code, last_error: attempt.error };
  let update: OutcomeUpdate;
  if (attempt.ok) {
    update = { ...base, status: 'delivered', next_attempt_at: null, delivered_at: attempt.finished_at };
  } else {
    const next = afterFailure(deps.policy, attempt.attempt - event.schedule_base, attempt.finished_at);
    update =
      next.kind === 'retry'
        ? { ...base, status: 'pending', next_attempt_at: next.at, delivered_at: null }
        : { ...base, status: 'undeliverable', next_attempt_at: null, delivered_at: null };
  }
  const applied = await deps.events.applyOutcome(event._id, attempt.attempt - 1, update);
  if (!applied) return { kind: 'stale' };

  const meta = { status_code: attempt.status_code, latency_ms: attempt.latency_ms };
  if (update.status === 'delivered') log.info('webhook delivered', meta);
  else if (update.status === 'undeliverable') log.warn('webhook undeliverable: every attempt failed', { ...meta, error: attempt.error });
  else
    log.info('webhook attempt failed, retry scheduled', {
      ...meta,
      error: attempt.error,
      next_attempt_at: update.next_attempt_at?.toISOString(),
    });

  const terminal = update.status !== 'pending';
  if (terminal) await wakeSuccessor(event, deps);
  return { kind: 'done', status: update.status as 'delivered' | 'pending' | 'undeliverable', terminal };
}

/** The task's next event may go now (it was parked while this one was pending). */
async function wakeSuccessor(event: EventDoc, deps: DeliverDeps): Promise<void> {
  const next = await deps.events.successorOf(event);
  if (next) await deps.events.wake(next._id, new Date());
}
