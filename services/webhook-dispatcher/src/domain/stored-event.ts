import type { Environment, TaskEventKind, WebhookEventName } from '@tes/contracts';

/* A webhook event as the dispatcher keeps it: its final state (EventDoc) or its pending schedule (PendingDoc). */

/**
 * - pending: to be attempted at `next_attempt_at` (if it is the head of its task); lives in
 *   `pending_events` (see PendingDoc), never in `events`;
 * - delivered: an attempt got HTTP 200;
 * - undeliverable: every attempt of its schedule failed;
 * - no_endpoint: the account environment had no endpoint when the event arrived;
 * - skipped: a task event kind with no webhook (started, resumed, cancelled), kept only so the
 *   next version knows its predecessor arrived. A task's first event (`created`, see
 *   isUnstoredFirst) is not kept at all: no later version waits for it.
 */
export const EVENT_STATUSES = ['pending', 'delivered', 'undeliverable', 'no_endpoint', 'skipped'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/**
 * One task event: `_id` is the webhook id derived from the message id. In the `events`
 * collection, an event is written once in its final state (delivered, undeliverable,
 * no_endpoint, skipped), by an insert; a pending event is a PendingDoc. The views the event
 * store returns combine both, so readers see one document per event.
 */
export interface EventDoc {
  _id: string;
  account_id: string;
  environment: Environment;
  task_id: string;
  /** The task's version after the change: orders the events of one task. */
  version: number;
  kind: TaskEventKind;
  event: WebhookEventName | null;
  /** The exact body every attempt sends and signs; null for skipped events. */
  body: string | null;
  occurred_at: string;
  received_at: Date;
  status: EventStatus;
  /** Attempts recorded so far (all schedules). */
  attempts_made: number;
  /** attempts_made when the current schedule began (0, or the count at an operator's redeliver). */
  schedule_base: number;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  updated_at: Date;
}

/**
 * The events still to be delivered, and only those: the poller's and the ordering checks'
 * working set, small however long the history grows (FerretDB v1 answers every query with a
 * scan of the whole collection, so the history must stay out of the hot path). A document is
 * inserted when a webhook event is stored, deleted when the event reaches its final state
 * (which is then inserted into `events`). Never updated: a retry is a new document
 * (`${event_id}~${n}`, open lane, due at the retry time) inserted by the holder of the attempt
 * that failed, which then deletes the previous one. Updates are the costly write on FerretDB v1
 * (a scan, a transaction per document, two connections held), inserts and batched deletes the
 * cheap ones.
 */
export interface PendingDoc extends Omit<EventDoc, 'status' | 'body'> {
  /** `${event_id}` when stored (or redelivered), `${event_id}~${attempts_made}` for a retry's schedule. */
  _id: string;
  /** The event (its webhook-id). */
  event_id: string;
  status: 'pending';
  body: string;
  /**
   * fast: the replica that stored the event delivers its first attempt itself, without a poll;
   * the others leave it alone until `next_attempt_at` (its hand-off time: a lease after storing),
   * when it counts as abandoned. open: any replica's poller, at `next_attempt_at`.
   */
  lane: 'fast' | 'open';
  /** Open lane: the quarter second `next_attempt_at` falls in (see slotOf), so a poller reads just the due ones. */
  slot?: number;
  /**
   * Fast lane: the replica that stored it (its lease lasts while that replica's heartbeat does,
   * see HolderLiveness). Open lane: the replica expected to run the next attempt (the one that
   * scheduled it); the others wait a little longer before they compete for it, so that several
   * replicas do not all race for every retry.
   */
  holder?: string;
  /** Documents stored together share a tag and are deleted together (an equality FerretDB v1 pushes down to PostgreSQL). */
  tag: string;
}

/** A pending document as the poller reads it: everything but the body. */
export type PendingHead = Omit<PendingDoc, 'body'>;

/** What a failed attempt changes in its event's schedule. */
export interface RetryUpdate {
  attempts_made: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
}

/** What the consumer stored, in queue order: a pending event (fast lane) or a final marker (skipped, no_endpoint). */
export type Stored =
  | { kind: 'pending'; doc: PendingDoc }
  | { kind: 'final'; doc: Pick<EventDoc, 'account_id' | 'environment' | 'task_id' | 'version' | 'kind'> };

/**
 * A task's first event: the orchestrator announces every task `created` at version 1 before
 * anything else (createTask), and that kind has no webhook. Nothing has to be delivered before
 * version 2, so no marker of it is stored (one insert less per task) and no version waits for it.
 */
export function isUnstoredFirst(e: Pick<EventDoc, 'kind' | 'version'>): boolean {
  return e.kind === 'created' && e.version === 1;
}

/** The task event kinds after which a task has no more events (spec: complete, failed, cancelled). */
export function isLastOfTask(kind: TaskEventKind): boolean {
  return kind === 'completed' || kind === 'failed' || kind === 'cancelled';
}

/** The latest schedule among an event's pending documents (most attempts). */
export function latest<T extends Pick<PendingDoc, 'attempts_made'>>(docs: readonly T[]): T | null {
  let best: T | null = null;
  for (const d of docs) if (!best || d.attempts_made > best.attempts_made) best = d;
  return best;
}

/** Open-lane due slots: a quarter of a second (a slot is read while it is current, so it should hold few events). */
const SLOT_MS = 250;

export function slotOf(doc: Pick<PendingDoc, 'next_attempt_at'>): number {
  return Math.floor((doc.next_attempt_at?.getTime() ?? 0) / SLOT_MS);
}
