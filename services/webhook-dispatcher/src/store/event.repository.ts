import { Schema, type Connection } from 'mongoose';
import type { Environment, TaskEventKind, WebhookEventName } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';

/**
 * - pending: to be attempted at `next_attempt_at` (if it is the head of its task);
 * - delivered: an attempt got HTTP 200;
 * - undeliverable: every attempt of its schedule failed;
 * - no_endpoint: the account environment had no endpoint when the event arrived;
 * - skipped: a task event kind with no webhook (created, started, resumed, cancelled), kept
 *   only so the next version knows its predecessor arrived.
 */
export const EVENT_STATUSES = ['pending', 'delivered', 'undeliverable', 'no_endpoint', 'skipped'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** One task event, stored once: `_id` is the webhook id derived from the message id. */
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

const eventSchema = new Schema<EventDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    task_id: { type: String, required: true },
    version: { type: Number, required: true },
    kind: String,
    event: String,
    body: String,
    occurred_at: String,
    received_at: Date,
    status: { type: String, required: true },
    attempts_made: Number,
    schedule_base: Number,
    next_attempt_at: Date,
    delivered_at: Date,
    last_status_code: Number,
    last_error: String,
    updated_at: Date,
  },
  { versionKey: false },
);
eventSchema.index({ status: 1, next_attempt_at: 1 });
eventSchema.index({ task_id: 1, version: 1 });
eventSchema.index({ account_id: 1, environment: 1, received_at: -1 });

type Key = Pick<EventDoc, 'account_id' | 'environment' | 'task_id'>;
export type EndpointKey = Pick<EventDoc, 'account_id' | 'environment'>;
const taskFilter = (e: Key) => ({ account_id: e.account_id, environment: e.environment, task_id: e.task_id });

export type OutcomeUpdate = Pick<
  EventDoc,
  'status' | 'attempts_made' | 'next_attempt_at' | 'delivered_at' | 'last_status_code' | 'last_error'
>;

export class EventRepository {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<EventDoc>('Event', eventSchema, 'events');
  }

  /** Stores an event once; false when a message with the same id was stored before. */
  async insert(doc: EventDoc): Promise<boolean> {
    try {
      await this.model.collection.insertOne(doc as never);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async get(id: string): Promise<EventDoc | null> {
    return this.model.findById(id).lean<EventDoc>().exec();
  }

  /**
   * Pending events whose time has come, oldest first, leaving out the events this replica
   * already handles and the account environments it is at its limit for (so a slow endpoint's
   * backlog cannot fill the batch and crowd out everybody else).
   */
  async due(now: Date, limit: number, skip: { ids?: readonly string[]; endpoints?: readonly EndpointKey[] } = {}): Promise<EventDoc[]> {
    const filter: Record<string, unknown> = { status: 'pending', next_attempt_at: { $lte: now } };
    if (skip.ids?.length) filter['_id'] = { $nin: [...skip.ids] };
    if (skip.endpoints?.length) filter['$nor'] = skip.endpoints.map((e) => ({ account_id: e.account_id, environment: e.environment }));
    return this.model.find(filter).sort({ next_attempt_at: 1 }).limit(limit).lean<EventDoc[]>().exec();
  }

  /** The earliest pending event of the task before this one: while it exists, this one waits. */
  async blockerOf(e: EventDoc): Promise<EventDoc | null> {
    return this.model
      .findOne({ ...taskFilter(e), status: 'pending', version: { $lt: e.version } })
      .sort({ version: 1 })
      .lean<EventDoc>()
      .exec();
  }

  /** The next pending event of the task after this one. */
  async successorOf(e: EventDoc): Promise<EventDoc | null> {
    return this.model
      .findOne({ ...taskFilter(e), status: 'pending', version: { $gt: e.version } })
      .sort({ version: 1 })
      .lean<EventDoc>()
      .exec();
  }

  async hasVersion(e: Key, version: number): Promise<boolean> {
    return (await this.model.exists({ ...taskFilter(e), version })) !== null;
  }

  /**
   * Moves a blocked, never-attempted event's time to when its blocker is next tried, so that it
   * does not come back from the poller's query until then. Touches only never-attempted events.
   */
  async park(id: string, until: Date): Promise<boolean> {
    const res = await this.model.collection.updateOne({ _id: id, status: 'pending', attempts_made: 0 } as never, {
      $set: { next_attempt_at: until },
    });
    return res.matchedCount > 0;
  }

  /** Makes a parked event due now (its blocker is done). */
  async wake(id: string, now: Date): Promise<void> {
    await this.model.collection.updateOne({ _id: id, status: 'pending', attempts_made: 0, next_attempt_at: { $gt: now } } as never, {
      $set: { next_attempt_at: now },
    });
  }

  /**
   * Applies an attempt's outcome; only if the event is still where that attempt left it
   * (pending, `attemptsBefore` attempts), so a replayed outcome changes nothing.
   */
  async applyOutcome(id: string, attemptsBefore: number, update: OutcomeUpdate, now = new Date()): Promise<boolean> {
    const res = await this.model.collection.updateOne({ _id: id, status: 'pending', attempts_made: attemptsBefore } as never, {
      $set: { ...update, updated_at: now },
    });
    return res.matchedCount > 0;
  }

  /** Sets an event that had no endpoint at delivery time to no_endpoint. */
  async markNoEndpoint(id: string, attemptsBefore: number, now = new Date()): Promise<boolean> {
    const res = await this.model.collection.updateOne({ _id: id, status: 'pending', attempts_made: attemptsBefore } as never, {
      $set: { status: 'no_endpoint', next_attempt_at: null, last_error: 'no webhook endpoint configured', updated_at: now },
    });
    return res.matchedCount > 0;
  }

  /** Operator's redeliver: a fresh schedule starting now. */
  async restart(e: EventDoc, now = new Date()): Promise<boolean> {
    const res = await this.model.collection.updateOne({ _id: e._id, status: e.status, attempts_made: e.attempts_made } as never, {
      $set: { status: 'pending', schedule_base: e.attempts_made, next_attempt_at: now, updated_at: now },
    });
    return res.matchedCount > 0;
  }

  async listByTask(taskId: string): Promise<EventDoc[]> {
    return this.model
      .find({ task_id: taskId, status: { $ne: 'skipped' } })
      .sort({ version: 1 })
      .lean<EventDoc[]>()
      .exec();
  }

  async listByAccount(accountId: string, environment: Environment | undefined, limit: number): Promise<EventDoc[]> {
    return this.model
      .find({ account_id: accountId, ...(environment ? { environment } : {}), status: { $ne: 'skipped' } })
      .sort({ received_at: -1 })
      .limit(limit)
      .lean<EventDoc[]>()
      .exec();
  }
}
