import type { TaskInspection } from '@tes/contracts';
import type { Task } from './task.js';

/**
 * The dashboard's view of a task (`task.inspect`): the prompt, the plan with each step's input as
 * it is sent to the executor, and where the task stands. Read only. Inputs go as stored: the
 * gateway's page masks what looks secret before showing them.
 */
export function inspection(task: Task, stepTimeoutMs: number): TaskInspection {
  return {
    prompt: task.prompt,
    mode: task.mode,
    status: task.status,
    steps: (task.workflow ?? []).map((s) => ({ tool: s.tool, action: s.action, input: s.input })),
    current_step: task.current_step,
    ...(task.step_dispatched_at ? { step_dispatched_at: task.step_dispatched_at } : {}),
    ...(task.started_at ? { started_at: task.started_at } : {}),
    waiting_on: task.waiting_on?.service ?? null,
    concurrency_limit: task.concurrency_limit,
    step_timeout_ms: stepTimeoutMs,
  };
}
