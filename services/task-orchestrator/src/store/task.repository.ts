import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';
import type { TaskStore } from '../domain/ports.js';
import type { ActiveCounts, Task } from '../domain/task.js';

/** A task as stored: with when it was last written and whether its stored outbox holds messages. */
export interface TaskDoc extends Task {
  updated_at: Date;
  /**
   * Set on every write: an equality the reaper's query can use an index for, where
   * `outbox.0 $exists` read every task (1.4 s per sweep at 12k tasks on FerretDB).
   */
  has_outbox?: boolean;
}

/** The document a write stores: the task, stamped. */
function stamped(task: Task): TaskDoc {
  return { ...task, updated_at: new Date(), has_outbox: task.outbox.length > 0 };
}

const taskSchema = new Schema<TaskDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    environment: String,
    status: String,
    created_at: String,
    updated_at: Date,
  },
  { versionKey: false, strict: false },
);
taskSchema.index({ account_id: 1, status: 1, created_at: 1 });
taskSchema.index({ status: 1, updated_at: 1 });
taskSchema.index({ account_id: 1, status: 1, user_id: 1 });
taskSchema.index({ has_outbox: 1, updated_at: 1 });

/** Ended tasks whose outboxes one command clears. */
const ENDED_CLEAR_BATCH = 50;

export class TaskRepository implements TaskStore {
  private readonly model;
  /** Tasks written before `has_outbox` existed are found by one full query, the first time. */
  private legacyOutboxesChecked = false;

  constructor(conn: Connection) {
    this.model = conn.model<TaskDoc>('Task', taskSchema, 'tasks');
  }

  async get(id: string): Promise<TaskDoc | null> {
    return this.model.collection.findOne({ _id: id } as never) as Promise<TaskDoc | null>;
  }

  /** False when a task with this id exists already (a redelivered create). */
  async insert(task: Task): Promise<boolean> {
    try {
      await this.model.collection.insertOne(stamped(task) as never);
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  /** Whole-document write: safe because one consumer owns the account's partition. */
  async save(task: Task): Promise<void> {
    await this.model.collection.replaceOne({ _id: task._id } as never, stamped(task));
  }

  /**
   * Clears published outboxes, each only if the task is still at the version whose outbox was
   * published (a later write carries its own outbox).
   *
   * Unfinished tasks: one command per task, one after another. Their writer may write them at any
   * moment, so they are cleared one at a time under the partition's turn; and FerretDB v1 holds a
   * PostgreSQL connection for every update of a bulkWrite until the whole command ends, plus one for
   * the write, so a batch larger than its pool (seen after a broker outage) waits for itself forever.
   *
   * `ended`: the tasks are complete, failed or cancelled, which no writer changes again, so one
   * `updateMany` per ENDED_CLEAR_BATCH tasks clears them (a single update statement: one read of
   * the tasks flagged `has_outbox`, then the writes), instead of one round trip (a read and a
   * write inside FerretDB) per task.
   */
  async clearOutboxes(published: readonly { id: string; version: number }[], opts: { ended?: boolean } = {}): Promise<void> {
    if (published.length === 0) return;
    const cleared = { $set: { outbox: [], has_outbox: false } };
    if (opts.ended && published.length > 1) {
      for (let i = 0; i < published.length; i += ENDED_CLEAR_BATCH) {
        const chunk = published.slice(i, i + ENDED_CLEAR_BATCH);
        // has_outbox: the equality FerretDB v1 pushes down to its (indexed) table scan.
        const res = await this.model.collection.updateMany(
          { has_outbox: true, $or: chunk.map((p) => ({ _id: p.id, version: p.version })) } as never,
          cleared,
        );
        // Fewer matched: a task written before the flag existed, or cleared already; each one by id then.
        if (res.matchedCount < chunk.length) await this.clearEach(chunk);
      }
      return;
    }
    await this.clearEach(published);
  }

  private async clearEach(published: readonly { id: string; version: number }[]): Promise<void> {
    for (const p of published) {
      await this.model.collection.updateOne({ _id: p.id, version: p.version } as never, { $set: { outbox: [], has_outbox: false } });
    }
  }

  /** The account's running and pending tasks (admission), in one round trip. */
  async countActive(accountId: string): Promise<ActiveCounts> {
    const groups = await this.model.collection
      .aggregate<{ _id: string; n: number }>([
        { $match: { account_id: accountId, status: { $in: ['running', 'pending'] } } },
        { $group: { _id: '$status', n: { $sum: 1 } } },
      ])
      .toArray();
    const n = (status: string) => groups.find((g) => g._id === status)?.n ?? 0;
    return { running: n('running'), pending: n('pending') };
  }

  /** Tasks of one user waiting for a connection to one service, oldest first. */
  async waitingFor(accountId: string, environment: Environment, userId: string, service: string): Promise<TaskDoc[]> {
    return this.model
      .find({ account_id: accountId, environment, user_id: userId, status: 'waiting', 'waiting_on.service': service })
      .sort({ created_at: 1, _id: 1 })
      .lean<TaskDoc[]>()
      .exec();
  }

  /** Tasks of the account's environment waiting for a connection to one service, whoever the user. */
  async waitingOn(accountId: string, environment: Environment, service: string): Promise<TaskDoc[]> {
    return this.model
      .find({ account_id: accountId, environment, status: 'waiting', 'waiting_on.service': service })
      .sort({ created_at: 1, _id: 1 })
      .lean<TaskDoc[]>()
      .exec();
  }

  /** The account's longest-waiting pending task (FIFO admission). */
  async oldestPending(accountId: string): Promise<TaskDoc | null> {
    return this.model.collection.findOne(
      { account_id: accountId, status: 'pending' },
      { sort: { created_at: 1, _id: 1 } },
    ) as Promise<TaskDoc | null>;
  }

  /** Tasks that need the writer's attention: unsent outbox, or running but untouched for a while. */
  async findNeedingAttention(stallBefore: Date, limit: number): Promise<Pick<TaskDoc, '_id' | 'account_id' | 'version'>[]> {
    const stale = await this.model
      .find({ status: 'running', updated_at: { $lt: stallBefore } }, { _id: 1, account_id: 1, version: 1 })
      .limit(limit)
      .lean<Pick<TaskDoc, '_id' | 'account_id' | 'version'>[]>()
      .exec();
    const withOutbox = this.legacyOutboxesChecked ? { has_outbox: true } : { 'outbox.0': { $exists: true } };
    const unsent = await this.model
      .find({ ...withOutbox, updated_at: { $lt: new Date(Date.now() - 5000) } }, { _id: 1, account_id: 1, version: 1 })
      .limit(limit)
      .lean<Pick<TaskDoc, '_id' | 'account_id' | 'version'>[]>()
      .exec();
    if (unsent.length < limit) this.legacyOutboxesChecked = true;
    return [...stale, ...unsent];
  }
}
