import { AppError } from '@tes/errors';
import type { Environment } from '@tes/contracts';
import type { DeliveryAttemptDoc, ResponseSample } from './attempt.js';
import type { AttemptStore, EventStore, PendingStore } from './ports.js';
import { slotOf, type EventDoc } from './stored-event.js';

export interface AttemptView {
  attempt: number;
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** With `detail` only: the URL posted to, the request's headers as sent, the start of the answer. */
  url?: string;
  request_headers?: Record<string, string>;
  response?: ResponseSample;
}

export interface DeliveryView {
  id: string;
  event: string | null;
  task_id: string;
  account_id: string;
  environment: Environment;
  version: number;
  status: string;
  occurred_at: string;
  received_at: string;
  attempts_made: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  attempts: AttemptView[];
  /** With `detail` only: the body every attempt sends (the exact bytes, as UTF-8). */
  body?: string | null;
}

interface Deps {
  events: EventStore;
  pending: PendingStore;
  attempts: AttemptStore;
}

export type ListQuery = { task_id: string } | { account_id: string; environment?: Environment; limit?: number };

/** `deliveries list`: the events of a task (in version order) or of an account (newest first), each with its attempts. */
export async function listDeliveries(deps: Deps, query: ListQuery): Promise<{ data: DeliveryView[] }> {
  const events =
    'task_id' in query
      ? await deps.events.listByTask(query.task_id)
      : await deps.events.listByAccount(query.account_id, query.environment, query.limit ?? 50);
  const attempts = await deps.attempts.listFor(events.map((e) => e._id));
  const byEvent = new Map<string, AttemptView[]>();
  for (const a of attempts) {
    const list = byEvent.get(a.event_id) ?? [];
    list.push(attemptView(a, false));
    byEvent.set(a.event_id, list);
  }
  return { data: events.map((e) => view(e, byEvent.get(e._id) ?? [])) };
}

/** One event in full, for the attempt inspector: its body and, per attempt, the request's headers and the answer. */
export async function deliveryDetail(deps: Deps, eventId: string): Promise<DeliveryView | null> {
  const event = await deps.events.get(eventId);
  if (!event || event.status === 'skipped') return null;
  const attempts = await deps.attempts.listFor([eventId]);
  return {
    ...view(
      event,
      attempts.map((a) => attemptView(a, true)),
    ),
    body: event.body,
  };
}

function attemptView(a: DeliveryAttemptDoc, detail: boolean): AttemptView {
  const base = { attempt: a.attempt, at: a.started_at.toISOString(), status_code: a.status_code, latency_ms: a.latency_ms, error: a.error };
  if (!detail) return base;
  return {
    ...base,
    url: a.url,
    ...(a.request_headers ? { request_headers: a.request_headers } : {}),
    ...(a.response ? { response: a.response } : {}),
  };
}

/**
 * `deliveries redeliver`: an undeliverable (or no_endpoint) event gets a fresh schedule that
 * starts now (a pending document in the open lane: the running dispatchers pick it up at their
 * next poll). The insert decides between two operators redelivering at once.
 */
export async function redeliver(deps: Deps, eventId: string, now = new Date()): Promise<DeliveryView> {
  const event = await deps.events.get(eventId);
  if (!event || event.status === 'skipped') throw new AppError('not_found', `no webhook event ${eventId}`);
  if (event.status !== 'undeliverable' && event.status !== 'no_endpoint') {
    throw new AppError(
      'invalid_request',
      `event ${eventId} is ${event.status}: only undeliverable or no_endpoint events can be redelivered`,
    );
  }
  if (event.body === null) throw new AppError('not_found', `no webhook event ${eventId}`);
  await freshSchedule(deps, event, event.body, now);
  return viewOf(deps, eventId, event);
}

/**
 * A fresh schedule for an event in a final state, starting now: a pending document in the open
 * lane (the running dispatchers pick it up at their next poll, in its task's order). Its insert
 * decides between two requests at once.
 */
export async function freshSchedule(deps: Pick<Deps, 'pending'>, event: EventDoc, body: string, now: Date): Promise<void> {
  const inserted = await deps.pending.insertOne({
    ...event,
    event_id: event._id,
    body,
    status: 'pending',
    schedule_base: event.attempts_made,
    next_attempt_at: now,
    delivered_at: null,
    updated_at: now,
    lane: 'open',
    slot: slotOf({ next_attempt_at: now }),
    tag: `redeliver:${event._id}:${event.attempts_made}`,
  });
  if (inserted !== 'inserted') throw new AppError('invalid_request', `event ${event._id} changed meanwhile: run it again`);
}

/** The event as it is now, with its attempts. */
export async function viewOf(deps: Deps, eventId: string, fallback: EventDoc): Promise<DeliveryView> {
  const after = await deps.events.get(eventId);
  const attempts = await deps.attempts.listFor([eventId]);
  return view(
    after ?? fallback,
    attempts.map((a) => attemptView(a, false)),
  );
}

function view(e: EventDoc, attempts: AttemptView[]): DeliveryView {
  return {
    id: e._id,
    event: e.event,
    task_id: e.task_id,
    account_id: e.account_id,
    environment: e.environment,
    version: e.version,
    status: e.status,
    occurred_at: e.occurred_at,
    received_at: e.received_at.toISOString(),
    attempts_made: e.attempts_made,
    next_attempt_at: e.next_attempt_at?.toISOString() ?? null,
    delivered_at: e.delivered_at?.toISOString() ?? null,
    attempts,
  };
}
