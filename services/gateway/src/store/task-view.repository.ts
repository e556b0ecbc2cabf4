import { Schema, type Connection } from 'mongoose';
import type { Environment, TaskEvent, TaskStatus } from '@tes/contracts';
import { isDuplicateKey } from '@tes/store';

/** The gateway's read model of a task, built from task events (and the create/cancel answers). */
export interface TaskViewDoc {
  _id: string;
  account_id: string;
  environment: Environment;
  user_id: string | null;
  status: TaskStatus;
  tool: string;
  metadata: Record<string, unknown>;
  created_at: string;
  completed_at?: string;
  failed_at?: string;
  cancelled_at?: string;
  result?: Record<string, unknown>;
  error?: TaskEvent['task']['error'];
  version: number;
}

const schema = new Schema<TaskViewDoc>({ _id: String }, { versionKey: false, strict: false });
schema.index({ account_id: 1, environment: 1, created_at: -1, _id: -1 });
schema.index({ account_id: 1, environment: 1, status: 1, created_at: -1, _id: -1 });
schema.index({ account_id: 1, environment: 1, user_id: 1, created_at: -1, _id: -1 });

export interface ListFilter {
  account_id: string;
  environment: Environment;
  status?: TaskStatus;
  user_id?: string;
}

export class TaskViewRepository {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<TaskViewDoc>('TaskView', schema, 'task_views');
  }

  async get(id: string, accountId: string, environment: Environment): Promise<TaskViewDoc | null> {
    return this.model.findOne({ _id: id, account_id: accountId, environment }).lean<TaskViewDoc>().exec();
  }

  /** Newest first, ties broken by id: stable under offset paging. */
  async list(filter: ListFilter, limit: number, offset: number): Promise<TaskViewDoc[]> {
    return this.model
      .find(filter, { _id: 1, status: 1, tool: 1, created_at: 1, completed_at: 1 })
      .sort({ created_at: -1, _id: -1 })
      .skip(offset)
      .limit(limit)
      .lean<TaskViewDoc[]>()
      .exec();
  }

  /**
   * Applies a snapshot if it is newer than what is stored. Events of one account
   * arrive through one partition consumer, so this is never raced by another event.
   */
  async apply(view: TaskViewDoc): Promise<void> {
    const res = await this.model.collection.updateOne({ _id: view._id, version: { $lt: view.version } } as never, { $set: view });
    if (res.matchedCount > 0) return;
    try {
      await this.model.collection.insertOne(view as never);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // an equal or newer version is stored
    }
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
    version: event.version,
  };
}
