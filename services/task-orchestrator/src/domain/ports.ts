import type { Environment, ToolView } from '@tes/contracts';
import type { ActiveCounts, Task } from './task.js';

/** The tasks collection as the writer needs it (implemented by store/task.repository.ts). */
export interface TaskStore {
  get(id: string): Promise<Task | null>;
  /** False when a task with this id exists already (a redelivered create). */
  insert(task: Task): Promise<boolean>;
  /** Whole-document write: safe because one consumer owns the account's partition. */
  save(task: Task): Promise<void>;
  /**
   * Clears each task's stored outbox if the task is still at the version whose outbox was published.
   * `ended`: every task given has ended (no writer changes it again), so they may go in one command.
   */
  clearOutboxes(published: readonly { id: string; version: number }[], opts?: { ended?: boolean }): Promise<void>;
  /** The account's running and pending tasks, in one round trip. */
  countActive(accountId: string): Promise<ActiveCounts>;
  /** Tasks of one user waiting for a connection to one service, oldest first. */
  waitingFor(accountId: string, environment: Environment, userId: string, service: string): Promise<Task[]>;
  /** Tasks of the account's environment waiting for a connection to one service, whoever the user. */
  waitingOn(accountId: string, environment: Environment, service: string): Promise<Task[]>;
  /** The account's longest-waiting pending task. */
  oldestPending(accountId: string): Promise<Task | null>;
}

/** The accounts' custom tools (implemented by store/tool.repository.ts). */
export interface ToolStore {
  /** Creates or replaces; answers the stored tool and whether it is new. */
  put(accountId: string, environment: Environment, tool: ToolView): Promise<{ tool: ToolView; created: boolean }>;
  list(accountId: string, environment: Environment): Promise<ToolView[]>;
  /** False when there was no such tool. */
  delete(accountId: string, environment: Environment, name: string): Promise<boolean>;
}
