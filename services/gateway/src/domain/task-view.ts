import type { Environment, PlannerInfoData, TaskEvent, TaskStatus, WaitingData } from '@tes/contracts';

/** The gateway's read model of a task, built from task events (and the create/cancel answers). */
export interface TaskView {
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
  /** Which planner made the task's plan (the trace shows it). */
  planner?: PlannerInfoData;
  /** What the task waits for, from its last task.waiting event (shown only while status is waiting). */
  waiting?: WaitingData;
  version: number;
}

export interface TaskListFilter {
  account_id: string;
  environment: Environment;
  status?: TaskStatus;
  user_id?: string;
}

/** Reads of the task read model (TaskViewRepository implements it). */
export interface TaskViewReader {
  get(id: string, accountId: string, environment: Environment): Promise<TaskView | null>;
  /** Newest first, ties broken by id: stable under offset paging. */
  list(filter: TaskListFilter, limit: number, offset: number): Promise<TaskView[]>;
}
