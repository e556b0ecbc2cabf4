import type { Environment } from '@tes/contracts';
import type { ClaimResult, DeliveryAttemptDoc, ResponseSample } from './attempt.js';
import type { EndpointDoc } from './endpoint.js';
import type { SecretDoc } from './secret.js';
import type { EventDoc, PendingDoc, PendingHead, RetryUpdate } from './stored-event.js';

/*
 * What the use cases and the scheduler need of the database, the cache and the network,
 * implemented by store/ (repositories, ConfigCache) and delivery/ (HttpSender).
 */

/** One document's fate in a batch of inserts: an insert of the same `_id` that won before is a duplicate. */
export type InsertOutcome = 'inserted' | 'duplicate';

type TaskKey = Pick<EventDoc, 'account_id' | 'environment' | 'task_id'>;

/** Events in their final state, and the reader's view of every event (implemented by store/event.repository.ts). */
export interface EventStore {
  insertMany(docs: readonly EventDoc[]): Promise<(InsertOutcome | Error)[]>;
  /** Writes an event's final state; replaces an older state only. */
  finalize(doc: EventDoc): Promise<void>;
  /** The event as readers see it: pending or final. */
  get(id: string): Promise<EventDoc | null>;
  /** Whether a version of the task has been stored in its final state (skipped markers included). */
  hasVersion(task: TaskKey, version: number): Promise<boolean>;
  listByTask(taskId: string): Promise<EventDoc[]>;
  listByAccount(accountId: string, environment: Environment | undefined, limit: number): Promise<EventDoc[]>;
}

/** The events still to be delivered (implemented by store/pending.repository.ts). */
export interface PendingStore {
  insertMany(docs: readonly PendingDoc[]): Promise<(InsertOutcome | Error)[]>;
  insertOne(doc: PendingDoc): Promise<InsertOutcome>;
  /** The event's current schedule (the pending document with the most attempts). */
  get(eventId: string): Promise<PendingDoc | null>;
  /** The open-lane documents due in one slot (see slotOf). */
  openSlot(slot: number): Promise<PendingDoc[]>;
  /** Every pending document. */
  all(): Promise<PendingDoc[]>;
  /** The pending events of one task, without bodies. */
  ofTask(task: TaskKey): Promise<PendingHead[]>;
  /** The pending documents of one task, bodies included (to deliver them). */
  taskDocs(task: TaskKey): Promise<PendingDoc[]>;
  /** Removes a finished event's document. */
  remove(doc: Pick<PendingDoc, '_id' | 'tag'>): Promise<void>;
  /** Takes back a document this process inserted a moment ago (its message was a duplicate). */
  removeOwn(id: string, tag: string): Promise<void>;
  /** Schedules the next attempt (an open-lane document expecting `holder`) and removes this one. */
  reschedule(doc: PendingDoc, update: RetryUpdate, holder: string): Promise<void>;
}

/** The dedup keys of task event messages (implemented by store/event-key.repository.ts). */
export interface EventKeyStore {
  insertMany(ids: readonly string[], at?: Date): Promise<(InsertOutcome | Error)[]>;
}

/** The recorded outcome of each attempt (implemented by store/delivery-attempt.repository.ts). */
export interface AttemptStore {
  /** Records an outcome (batched); false when this attempt's outcome was recorded already. */
  recordBatched(doc: DeliveryAttemptDoc): Promise<boolean>;
  get(eventId: string, attempt: number): Promise<DeliveryAttemptDoc | null>;
  /** The attempts of these events, by event then attempt. */
  listFor(eventIds: readonly string[]): Promise<DeliveryAttemptDoc[]>;
}

/** Who performs attempt n of an event (implemented by store/attempt-claim.repository.ts). */
export interface ClaimStore {
  /**
   * `suspect`: the event is overdue, its holder may have died: a claim older than the lease, or
   * whose holder `isGone`, is taken over.
   */
  acquire(
    eventId: string,
    attempt: number,
    holder: string,
    leaseMs: number,
    options: { suspect?: boolean; isGone?: (holder: string) => boolean },
  ): Promise<ClaimResult>;
  /** The events of the claims a holder made since then (what a holder found gone may have had in flight). */
  recentOf(holder: string, since: Date): Promise<string[]>;
}

/** The endpoints (implemented by store/endpoint.repository.ts). */
export interface EndpointStore {
  get(accountId: string, environment: Environment): Promise<EndpointDoc | null>;
  set(accountId: string, environment: Environment, url: string): Promise<EndpointDoc>;
}

/** The signing secrets, opened (implemented by store/secret.repository.ts). */
export interface SecretStore {
  /** The newest versions first. */
  latest(accountId: string, environment: Environment, limit?: number): Promise<SecretDoc[]>;
  /** Inserts one version; false when that version exists already. */
  insert(doc: Omit<SecretDoc, '_id'>): Promise<boolean>;
}

/** An environment's endpoint and signing secrets as a delivery reads them (implemented by store/config-cache.ts). */
export interface DeliveryConfig {
  endpoint(accountId: string, environment: Environment): Promise<EndpointDoc | null>;
  /** The newest two versions, newest first. */
  secretVersions(accountId: string, environment: Environment): Promise<SecretDoc[]>;
}

export interface SendRequest {
  url: string;
  environment: Environment;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface SendResult {
  /** Exactly HTTP 200 within the timeout. */
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /** The headers of the request as sent (absent when no request was made: refused by the guard, no secret). */
  request_headers?: Record<string, string>;
  /** The start of the receiver's answer, when it answered (see ResponseSample). */
  response?: ResponseSample;
}

/** Posts one signed webhook (implemented by delivery/http-sender.ts). */
export interface WebhookSender {
  send(req: SendRequest): Promise<SendResult>;
}
