import { Schema, type Connection, type mongo } from 'mongoose';
import type { InsertOutcome, PendingStore } from '../domain/ports.js';
import { latest, slotOf, type EventDoc, type PendingDoc, type PendingHead, type RetryUpdate } from '../domain/stored-event.js';
import { Batcher, insertBatcher, insertEach } from './batch.js';

const pendingSchema = new Schema<PendingDoc>(
  {
    _id: String,
    event_id: { type: String, required: true },
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    task_id: { type: String, required: true },
    version: { type: Number, required: true },
    lane: { type: String, required: true },
    tag: String,
    next_attempt_at: Date,
  },
  { versionKey: false, strict: false },
);
pendingSchema.index({ lane: 1, slot: 1 });
pendingSchema.index({ task_id: 1, version: 1 });
pendingSchema.index({ event_id: 1 });

type TaskKey = Pick<EventDoc, 'account_id' | 'environment' | 'task_id'>;

/** The `pending_events` collection: the events still to be delivered, and only those (see PendingDoc). */
export class PendingRepository implements PendingStore {
  private readonly model;
  private readonly deletes: Batcher<{ tag: string; id: string }, void>;
  private readonly inserts: Batcher<PendingDoc, InsertOutcome>;

  constructor(conn: Connection) {
    this.model = conn.model<PendingDoc>('PendingEvent', pendingSchema, 'pending_events');
    this.deletes = new Batcher<{ tag: string; id: string }, void>((items) => this.deleteGrouped(items), {
      maxBatch: 2000,
      maxConcurrent: 2,
    });
    this.inserts = insertBatcher<PendingDoc>(() => this.col);
  }

  private get col(): mongo.Collection {
    return this.model.collection;
  }

  insertMany(docs: readonly PendingDoc[]): Promise<(InsertOutcome | Error)[]> {
    return insertEach(this.col, docs);
  }

  async insertOne(doc: PendingDoc): Promise<InsertOutcome> {
    const [r] = await insertEach(this.col, [doc]);
    if (r instanceof Error) throw r;
    return r ?? 'inserted';
  }

  /** The event's current schedule: its pending document with the most attempts (a retry leaves the previous one behind only until it is deleted). */
  async get(eventId: string): Promise<PendingDoc | null> {
    const docs = await this.col.find<PendingDoc>({ event_id: eventId }).toArray();
    return latest(docs);
  }

  /**
   * The open-lane documents due in one slot, bodies included: FerretDB v1 reads
   * whole documents from PostgreSQL whatever the projection, so a second read for the bodies
   * would cost more, and pushes only equalities down, hence slots rather than a time range.
   */
  async openSlot(slot: number): Promise<PendingDoc[]> {
    return this.col.find<PendingDoc>({ lane: 'open', slot }).toArray();
  }

  /** Every pending document (the poller's periodic full read: abandoned fast-lane events, anything a slot read missed). */
  async all(): Promise<PendingDoc[]> {
    return this.col.find<PendingDoc>({}).toArray();
  }

  /** The pending events of one task, without bodies (ordering checks). */
  async ofTask(key: TaskKey): Promise<PendingHead[]> {
    return this.col
      .find<PendingHead>({ account_id: key.account_id, environment: key.environment, task_id: key.task_id }, { projection: { body: 0 } })
      .toArray();
  }

  /** The pending documents of one task, bodies included (a chase of its next events: see TaskOrdering.adopt). */
  async taskDocs(key: TaskKey): Promise<PendingDoc[]> {
    return this.col.find<PendingDoc>({ account_id: key.account_id, environment: key.environment, task_id: key.task_id }).toArray();
  }

  async bodies(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const docs = await this.col
      .find<{ _id: string; body: string }>({ _id: { $in: [...ids] } } as never, { projection: { body: 1 } })
      .toArray();
    return new Map(docs.map((d) => [d._id, d.body]));
  }

  /** Removes a delivered (or otherwise finished) event; batched with the others finishing now. */
  remove(doc: Pick<PendingDoc, '_id' | 'tag'>): Promise<void> {
    return this.deletes.add({ tag: doc.tag, id: doc._id });
  }

  /** Takes back a document this process inserted a moment ago (its message turned out to be a duplicate). */
  async removeOwn(id: string, tag: string): Promise<void> {
    await this.col.deleteOne({ _id: id, tag } as never);
  }

  /**
   * The holder of the attempt that failed schedules the next one: inserts the new schedule (its id
   * names the attempt count, so a repeat of this step inserts nothing twice), then deletes the old.
   * In between, both exist: readers take the one with more attempts.
   */
  async reschedule(doc: PendingDoc, update: RetryUpdate, holder: string, now = new Date()): Promise<void> {
    const next: PendingDoc = {
      ...doc,
      ...update,
      holder,
      _id: `${doc.event_id}~${update.attempts_made}`,
      lane: 'open',
      slot: slotOf(update),
      // Retries due in the same slot share a tag (in a few buckets): removed together, cheaply.
      tag: `retry.${slotOf(update)}.${bucketOf(doc.event_id)}`,
      updated_at: now,
    };
    await this.inserts.add(next);
    await this.remove(doc);
  }

  async listByTask(taskId: string): Promise<PendingDoc[]> {
    return this.col.find<PendingDoc>({ task_id: taskId }).toArray();
  }

  async listByAccount(accountId: string, environment: EventDoc['environment'] | undefined, limit: number): Promise<PendingDoc[]> {
    return this.col
      .find<PendingDoc>({ account_id: accountId, ...(environment ? { environment } : {}) })
      .sort({ received_at: -1 })
      .limit(limit)
      .toArray();
  }

  private async deleteGrouped(items: { tag: string; id: string }[]): Promise<void[]> {
    const byTag = new Map<string, string[]>();
    for (const { tag, id } of items) {
      const ids = byTag.get(tag);
      if (ids) ids.push(id);
      else byTag.set(tag, [id]);
    }
    const groups = [...byTag];
    for (let i = 0; i < groups.length; i += 4) {
      await Promise.all(groups.slice(i, i + 4).map(([tag, ids]) => this.col.deleteMany({ tag, _id: { $in: ids } } as never)));
    }
    return items.map(() => undefined);
  }
}

function bucketOf(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return (h >>> 0) % 8;
}
