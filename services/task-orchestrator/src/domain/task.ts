import type { Environment, MessageDataMap, MessageType, PlannerInfoData, TaskError, TaskStatus, ToolView } from '@tes/contracts';

export interface WorkflowStep {
  tool: string;
  action: string;
  input: Record<string, unknown>;
}

export interface OutboxMessage<T extends MessageType = MessageType> {
  id: string;
  type: T;
  data: MessageDataMap[T];
  partition_key?: string;
  /** The X-Request-Id of the HTTP request that created the task, carried by every message. */
  correlation_id?: string;
}

/** The task aggregate. Only the partition consumer of its account writes it. */
export interface Task {
  _id: string;
  account_id: string;
  environment: Environment;
  user_id: string | null;
  prompt: string;
  metadata: Record<string, unknown>;
  mode: 'live' | 'test';
  status: TaskStatus;
  tool: string;
  created_at: string;
  started_at?: string;
  completed_at?: string;
  failed_at?: string;
  cancelled_at?: string;
  result?: Record<string, unknown>;
  error?: TaskError;
  /** The plan, recorded at create (absent only for tasks stored before that, or a crash case). */
  workflow?: WorkflowStep[];
  /** Which planner made the plan (shown in the trace). */
  planner?: PlannerInfoData;
  /** The custom tools the workflow uses, as they were when it was planned. */
  custom_tools?: ToolView[];
  /** Set while `waiting`: the user's service connection the current step needs. */
  waiting_on?: { service: string } | null;
  /** Index of the step running now (or next to run). */
  current_step: number;
  /**
   * When the current step was first sent (at the start, after the previous step, or on resuming
   * after consent); re-dispatching a stalled step keeps it. The stall give-up counts from here.
   */
  step_dispatched_at?: string;
  outputs: Record<string, unknown>[];
  concurrency_limit: number;
  /** The X-Request-Id of the create request: on every message and log line about the task. */
  correlation_id?: string;
  /** One more with every event about the task (`task.event` versions have no gaps). */
  version: number;
  /** Messages to publish, written with the task; cleared by the same writer once confirmed. */
  outbox: OutboxMessage[];
}

/** An account's tasks that hold (running) or wait for (pending) a concurrency slot. */
export interface ActiveCounts {
  running: number;
  pending: number;
}
