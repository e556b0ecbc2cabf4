import { Schema, type Connection, type mongo } from 'mongoose';
import type { Environment } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';
import type { EventStore, InsertOutcome } from '../domain/ports.js';
import { latest, type EventDoc, type PendingDoc } from '../domain/stored-event.js';
import { Limiter, insertBatcher, insertEach, type Batcher } from './batch.js';
import type { PendingRepository } from './pending.repository.js';

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
eventSchema.index({ task_id: 1, version: 1 });
eventSchema.index({ account_id: 1, environment: 1, received_at: -1 });

type Key = Pick<EventDoc, 'account_id' | 'environment' | 'task_id'>;
const taskFilter = (e: Key) => ({ account_id: e.account_id, environment: e.environment, task_id: e.task_id });

/**
 * What a reader sees: the pending document while one exists, unless `events` already holds a
 * later state (its final insert is done and the pending document is about to go, or was left
 * behind by a crash and awaits its repair).
 */
export function viewOf(stored: EventDoc | null, pending: PendingDoc | null): EventDoc | null {
  if (pending && !(stored && isLater(stored, pending))) {
    const { lane: _lane, tag: _tag, event_id: eventId, ...doc } = pending;
    return { ...doc, _id: eventId };
  }
  return stored;
}

/** (attempts_made, schedule_base) orders the states of one event. */
function isLater(a: Pick<EventDoc, 'attempts_made' | 'schedule_base'>, b: Pick<EventDoc, 'attempts_made' | 'schedule_base'>): boolean {
  return a.attempts_made > b.attempts_made || (a.attempts_made === b.attempts_made && a.schedule_base > b.schedule_base);
}

/** The `events` collection (final states, see EventDoc), and the readers' view of every event, pending ones included. */
export class EventRepository implements EventStore {
  private readonly model;
  private readonly finals: Batcher<EventDoc, InsertOutcome>;
  private readonly updates = new Limiter(2);

  constructor(
    conn: Connection,
    private readonly pending: PendingRepository,
  ) {
    this.model = conn.model<EventDoc>('Event', eventSchema, 'events');
    this.finals = insertBatcher<EventDoc>(() => this.col);
  }

  private get col(): mongo.Collection {
    return this.model.collection;
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

  insertMany(docs: readonly EventDoc[]): Promise<(InsertOutcome | Error)[]> {
    return insertEach(this.col, docs);
  }

  /**
   * Writes an event's final state (batched with the others finishing now). Normally the first
   * and only write of the event in this collection; after an operator's redeliver (or a crash
   * repair) an older state is there already, and is replaced only by a later one.
   */
  async finalize(doc: EventDoc): Promise<void> {
    if ((await this.finals.add(doc)) === 'inserted') return;
    const { _id, ...rest } = doc;
    await this.updates.run(() =>
      this.col.updateOne(
        {
          _id,
          $or: [
            { attempts_made: { $lt: doc.attempts_made } },
            { attempts_made: doc.attempts_made, schedule_base: { $lt: doc.schedule_base } },
          ],
        } as never,
        { $set: rest },
      ),
    );
  }

  /** The stored (non-pending) document alone. */
  async getStored(id: string): Promise<EventDoc | null> {
    return this.col.findOne<EventDoc>({ _id: id } as never);
  }

  /** The event as readers see it: pending or final. */
  async get(id: string): Promise<EventDoc | null> {
    // Pending first: a pending document is removed only after its final state was inserted.
    const pending = await this.pending.get(id);
    return viewOf(await this.getStored(id), pending);
  }

  /** Whether a version of the task has been stored in its final state (skipped markers included). */
  async hasVersion(e: Key, version: number): Promise<boolean> {
    return (await this.col.findOne({ ...taskFilter(e), version }, { projection: { _id: 1 } })) !== null;
  }

  async listByTask(taskId: string): Promise<EventDoc[]> {
    const pending = await this.pending.listByTask(taskId);
    const stored = await this.col
      .find<EventDoc>({ task_id: taskId, status: { $ne: 'skipped' } })
      .sort({ version: 1 })
      .toArray();
    return merge(stored, pending).sort((a, b) => a.version - b.version);
  }

  async listByAccount(accountId: string, environment: Environment | undefined, limit: number): Promise<EventDoc[]> {
    const pending = await this.pending.listByAccount(accountId, environment, limit);
    const stored = await this.col
      .find<EventDoc>({ account_id: accountId, ...(environment ? { environment } : {}), status: { $ne: 'skipped' } })
      .sort({ received_at: -1 })
      .limit(limit)
      .toArray();
    return merge(stored, pending)
      .sort((a, b) => b.received_at.getTime() - a.received_at.getTime() || (b._id < a._id ? -1 : 1))
      .slice(0, limit);
  }
}

function merge(stored: EventDoc[], pending: PendingDoc[]): EventDoc[] {
  const byId = new Map<string, EventDoc>(stored.map((e) => [e._id, e]));
  const schedules = new Map<string, PendingDoc[]>();
  for (const p of pending) schedules.set(p.event_id, [...(schedules.get(p.event_id) ?? []), p]);
  for (const [eventId, docs] of schedules) {
    const view = viewOf(byId.get(eventId) ?? null, latest(docs));
    if (view) byId.set(eventId, view);
  }
  return [...byId.values()];
}
