import { Schema, type Connection } from 'mongoose';
import type { Environment, TaskEvent } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';
import type { TaskListFilter, TaskView, TaskViewReader } from '../domain/task-view.js';

/** The stored document is the domain's TaskView as it is. */
export type TaskViewDoc = TaskView;

const schema = new Schema<TaskViewDoc>({ _id: String }, { versionKey: false, strict: false });
schema.index({ account_id: 1, environment: 1, created_at: -1, _id: -1 });
schema.index({ account_id: 1, environment: 1, status: 1, created_at: -1, _id: -1 });
schema.index({ account_id: 1, environment: 1, user_id: 1, created_at: -1, _id: -1 });

/** Views this process knows are stored; a view is never deleted, so this stays true. Bounded. */
const KNOWN_MAX = 4096;

export class TaskViewRepository implements TaskViewReader {
  private readonly model;
  private readonly known = new Set<string>();
  /** First versions being inserted by this process: the create answer and the task.created event wait for one insert. */
  private readonly inserting = new Map<string, Promise<boolean>>();

  constructor(conn: Connection) {
    this.model = conn.model<TaskViewDoc>('TaskView', schema, 'task_views');
  }

  async get(id: string, accountId: string, environment: Environment): Promise<TaskViewDoc | null> {
    return this.model.collection.findOne({ _id: id, account_id: accountId, environment } as never) as Promise<TaskViewDoc | null>;
  }

  /** Newest first, ties broken by id: stable under offset paging. */
  async list(filter: TaskListFilter, limit: number, offset: number): Promise<TaskViewDoc[]> {
    return this.model
      .find(filter, { _id: 1, status: 1, tool: 1, created_at: 1, completed_at: 1 })
      .sort({ created_at: -1, _id: -1 })
      .skip(offset)
      .limit(limit)
      .lean<TaskViewDoc[]>()
      .exec();
  }

  /**
   * Applies a snapshot if it is newer than what is stored. Versions start at 1, so a first
   * version is only ever inserted, and not even that when this process knows the view is
   * stored already or is storing it (the create answer and the task.created event arrive
   * together; the second one waits for the first one's insert and costs nothing).
   * A later version updates; if nothing older is stored, it is inserted; if that insert meets
   * a view (an older one inserted meanwhile by the create answer), the update runs again.
   * Events of one account arrive through one partition consumer; the create and cancel
   * answers are the only other writers, and each writes a version its event also carries.
   */
  async apply(view: TaskViewDoc): Promise<void> {
    if (view.version <= 1) {
      if (this.known.has(view._id)) return;
      const running = this.inserting.get(view._id);
      if (running) {
        await running;
        return;
      }
      const insert = this.insert(view).finally(() => this.inserting.delete(view._id));
      this.inserting.set(view._id, insert);
      await insert;
      return;
    }
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await this.model.collection.updateOne({ _id: view._id, version: { $lt: view.version } } as never, { $set: view });
      if (res.matchedCount > 0 || (await this.insert(view))) return;
    }
  }

  /** Inserts the view; false when one is stored already (it may be older, equal or newer). */
  private async insert(view: TaskViewDoc): Promise<boolean> {
    try {
      await this.model.collection.insertOne(view as never);
      this.remember(view._id);
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      this.remember(view._id);
      return false;
    }
  }

  private remember(id: string): void {
    this.known.add(id);
    if (this.known.size > KNOWN_MAX) this.known.delete(this.known.values().next().value as string);
  }
}

export function viewFromEvent(event: TaskEvent): TaskViewDoc {
  const t = event.task;
  return {
    _id: t.id,
    account_id: t.account_id,
    environment: t.environment,
    user_id: t.user_id,
    status: t.status,
    tool: t.tool,
    metadata: t.metadata,
    created_at: t.created_at,
    ...(t.completed_at ? { completed_at: t.completed_at } : {}),
    ...(t.failed_at ? { failed_at: t.failed_at } : {}),
    ...(t.cancelled_at ? { cancelled_at: t.cancelled_at } : {}),
    ...(t.result ? { result: t.result } : {}),
    ...(t.error ? { error: t.error } : {}),
    ...(t.planner ? { planner: t.planner } : {}),
    ...(event.kind === 'waiting' && event.waiting ? { waiting: event.waiting } : {}),
    version: event.version,
  };
}
