import {
  TERMINAL_STATUSES,
  WORKFLOW_MAX_STEPS,
  newMessageId,
  type ConnectionChanged,
  type StepResult,
  type TaskCancel,
  type TaskCreate,
  type TaskEvent,
  type TaskEventKind,
  type TaskReply,
  type ToolView,
} from '@tes/contracts';
import type { Plan } from '@tes/planner';
import { catalogWith, customStep } from './custom-tools.js';
import { previewOf } from './preview.js';
import { planStored } from './task-plan.js';
import { createdReply, errorReply } from './task-replies.js';
import type { OutboxMessage, Task, WorkflowStep } from './task.js';

/**
 * The task's state machine, as pure functions: each takes a task and what happened, and returns
 * the task after it (undefined: nothing changes), never changing the task it was given. The
 * messages a change announces are appended to the returned task's outbox (written with the task,
 * then published): one `task.event` per change, each one version more, and the `step.run` of a
 * step to run. No I/O and no clock: the time comes in the context.
 */
export interface TransitionContext {
  now: Date;
  /** The timeout given to the executor with each step.run. */
  stepTimeoutMs: number;
}

/** What a planned create brings: its plan and tool (task-plan.ts), the custom tools it may use, and admission's answer. */
export interface NewTask {
  plan: Plan;
  tool: string;
  custom: readonly ToolView[];
  /** A concurrency slot is free: the task runs now, else it is pending. */
  admitted: boolean;
  /** The X-Request-Id of the create request. */
  correlationId?: string | undefined;
}

/**
 * The task of a planned create, announced as created. A running task starts (its first step in
 * the outbox, a test-mode preview, or a failure for a plan too deep); a pending task keeps its
 * plan until it is admitted. `reply` is the create answer: the task as created, before it started.
 */
export function createTask(cmd: TaskCreate, created: NewTask, ctx: TransitionContext): { task: Task; reply: TaskReply } {
  const task: Task = {
    _id: cmd.task_id,
    account_id: cmd.account_id,
    environment: cmd.environment,
    user_id: cmd.user_id ?? null,
    prompt: cmd.prompt,
    metadata: cmd.metadata ?? {},
    mode: cmd.mode,
    status: created.admitted ? 'running' : 'pending',
    tool: created.tool,
    planner: created.plan.planner,
    created_at: cmd.created_at,
    current_step: 0,
    outputs: [],
    concurrency_limit: cmd.concurrency_limit,
    ...(created.correlationId ? { correlation_id: created.correlationId } : {}),
    version: 0,
    outbox: [],
  };
  if (created.admitted) task.started_at = ctx.now.toISOString();
  emit(task, 'created');
  const reply = createdReply(task);
  recordPlan(task, created.plan.steps, created.custom);
  if (created.admitted) start(task, ctx);
  return { task, reply };
}

/**
 * A pending task takes a free concurrency slot: it is started and runs (or is previewed) on its
 * recorded plan, not planned again. A task stored without a plan is only started: planAndStart next.
 */
export function admit(task: Task, ctx: TransitionContext): Task | undefined {
  if (task.status !== 'pending') return undefined;
  const next = draft(task);
  next.status = 'running';
  next.started_at = ctx.now.toISOString();
  emit(next, 'started');
  if (next.workflow) start(next, ctx);
  return next;
}

/** A running task stored without a plan: planAndStart plans it. */
export function needsPlan(task: Task): boolean {
  return task.status === 'running' && !task.workflow;
}

/**
 * A running task stored without a plan (stored before plans were recorded at create, or a crash
 * case): the rules planner plans it, then it runs or is previewed; a refusal fails it before any step runs.
 */
export function planAndStart(task: Task, custom: readonly ToolView[], ctx: TransitionContext): Task | undefined {
  if (!needsPlan(task)) return undefined;
  const outcome = planStored(task, custom);
  const next = draft(task);
  if (outcome.ok) {
    next.planner = outcome.plan.planner;
    recordPlan(next, outcome.plan.steps, custom);
    start(next, ctx);
    return next;
  }
  const r = outcome.refusal;
  next.planner = { name: 'rules' };
  fail(next, { code: r.code, message: r.message, tool: next.tool, recoverable: false, suggestion: r.suggestion }, ctx);
  return next;
}

/**
 * The executor's result for the current step: the next step is dispatched, or the task completes,
 * waits for the user's consent, or fails. A stale or duplicate result, or one for a task no longer
 * running (a cancel wins over a late result), changes nothing.
 */
export function applyStepResult(task: Task, res: StepResult, ctx: TransitionContext): Task | undefined {
  if (task.status !== 'running' || res.step_index !== task.current_step || !task.workflow) return undefined;
  const next = draft(task);
  const total = task.workflow.length;
  const step = task.workflow[res.step_index];
  if (res.outcome === 'complete') {
    next.outputs[res.step_index] = res.output ?? {};
    if (res.step_index + 1 < total) {
      next.current_step = res.step_index + 1;
      emit(next, 'progress', {
        progress: {
          step: `${res.step_index + 1}/${total}`,
          tool: step?.tool ?? next.tool,
          message: `${step?.tool}.${step?.action} done`,
          progress_pct: Math.round(((res.step_index + 1) / total) * 100),
        },
      });
      dispatchCurrent(next, ctx);
      return next;
    }
    next.status = 'complete';
    next.completed_at = ctx.now.toISOString();
    next.result = resultOf(next);
    emit(next, 'completed');
  } else if (res.outcome === 'needs_authorization' && res.authorization) {
    next.status = 'waiting';
    next.waiting_on = { service: res.authorization.service };
    emit(next, 'waiting', { waiting: res.authorization });
  } else {
    fail(next, res.error ?? { code: 'step_failed', message: 'step failed', tool: step?.tool ?? next.tool, recoverable: false }, ctx);
  }
  return next;
}

/**
 * A user's consent flow for the service the task waits on ended. Authorized: the task resumes from
 * the step that needed it. Denied: it fails, recoverably. A revoked connection changes no task.
 */
export function applyConnectionChange(
  task: Task,
  ev: Pick<ConnectionChanged, 'outcome' | 'service'>,
  ctx: TransitionContext,
): Task | undefined {
  if (task.status !== 'waiting' || task.waiting_on?.service !== ev.service || ev.outcome === 'revoked') return undefined;
  const next = draft(task);
  next.waiting_on = null;
  if (ev.outcome === 'authorized') {
    next.status = 'running';
    emit(next, 'resumed');
    dispatchCurrent(next, ctx);
    return next;
  }
  fail(
    next,
    {
      code: 'permission_denied',
      message: `The user did not grant access to ${ev.service}`,
      tool: next.tool,
      recoverable: true,
      suggestion: `Ask the user to authorize ${ev.service} and create the task again`,
    },
    ctx,
  );
  return next;
}

/** A custom tool was deleted: a task waiting for a user's consent to it can never resume; it fails. */
export function failOnToolDeleted(task: Task, name: string, ctx: TransitionContext): Task | undefined {
  if (task.status !== 'waiting' || task.waiting_on?.service !== name) return undefined;
  const next = draft(task);
  next.waiting_on = null;
  fail(
    next,
    {
      code: 'step_failed',
      message: `The custom tool ${name} was deleted while the task waited for the user's authorization`,
      tool: next.tool,
      recoverable: false,
    },
    ctx,
  );
  return next;
}

/**
 * A cancel: the answer, and the cancelled task unless it was not found (another account or
 * environment) or had already ended (`task_already_complete`, nothing changes).
 */
export function cancelTask(
  task: Task | undefined,
  cmd: Pick<TaskCancel, 'task_id' | 'account_id' | 'environment'>,
  ctx: TransitionContext,
): { reply: TaskReply; task?: Task } {
  if (!task || task.account_id !== cmd.account_id || task.environment !== cmd.environment) {
    return { reply: errorReply('task_not_found', `No task ${cmd.task_id}`) };
  }
  if (TERMINAL_STATUSES.includes(task.status)) {
    return { reply: errorReply('task_already_complete', `Task ${task._id} is already ${task.status}`) };
  }
  const next = draft(task);
  next.status = 'cancelled';
  next.cancelled_at = ctx.now.toISOString();
  emit(next, 'cancelled');
  return {
    reply: { ok: true, version: next.version, task: { id: next._id, status: 'cancelled', cancelled_at: next.cancelled_at } },
    task: next,
  };
}

/** How long the current step has gone without a result since it was first sent; NaN for a task stored before that was recorded. */
export function stalledMs(task: Task, now: Date): number {
  return now.getTime() - Date.parse(task.step_dispatched_at ?? '');
}

/**
 * A reconcile of a running task's current step: its step.run is sent again (same idempotency key),
 * or, once the step has gone `giveUpAfterMs` without a result since it was first sent, the task
 * fails with `service_unavailable`, recoverably. `unsentStep`: the step.run had not gone out yet,
 * so nothing has stalled (it goes out now). Undefined for a task not running on a plan.
 */
export function reconcileStep(task: Task, opts: { unsentStep: boolean; giveUpAfterMs: number }, ctx: TransitionContext): Task | undefined {
  if (task.status !== 'running' || !task.workflow) return undefined;
  const stalled = stalledMs(task, ctx.now);
  const next = draft(task);
  if (!opts.unsentStep && stalled >= opts.giveUpAfterMs) {
    giveUp(next, task.workflow, stalled, ctx);
    return next;
  }
  // NaN for a task stored before the field existed: its clock starts with this re-dispatch.
  dispatchCurrent(next, ctx, { again: !opts.unsentStep && !Number.isNaN(stalled) });
  return next;
}

/** A copy to change: the arrays a transition appends to are copied too, so the given task never changes. */
function draft(task: Task): Task {
  return { ...task, outputs: [...task.outputs], outbox: [...task.outbox] };
}

/** Fails the task with `error` and announces it. */
function fail(task: Task, error: NonNullable<Task['error']>, ctx: TransitionContext): void {
  task.status = 'failed';
  task.failed_at = ctx.now.toISOString();
  task.error = error;
  emit(task, 'failed');
}

/**
 * Starts a running task on its recorded plan: fails it when the plan is empty or too deep,
 * previews it in test mode (complete at once, nothing runs), or puts its first step in the outbox.
 */
function start(task: Task, ctx: TransitionContext): void {
  const workflow = task.workflow ?? [];
  if (workflow.length === 0) {
    return fail(
      task,
      { code: 'no_matching_tool', message: 'No workflow could be generated for the prompt', tool: task.tool, recoverable: false },
      ctx,
    );
  }
  if (workflow.length > WORKFLOW_MAX_STEPS) {
    return fail(
      task,
      {
        code: 'workflow_depth_exceeded',
        message: `The workflow has ${workflow.length} steps; the limit is ${WORKFLOW_MAX_STEPS}`,
        tool: task.tool,
        recoverable: false,
        suggestion: 'Split the prompt into smaller tasks',
      },
      ctx,
    );
  }
  if (task.mode === 'test') {
    task.status = 'complete';
    task.completed_at = ctx.now.toISOString();
    task.result = { preview: previewOf(task.tool, workflow, catalogWith(task.custom_tools ?? []), task.planner?.derived) };
    emit(task, 'completed');
    return;
  }
  dispatchCurrent(task, ctx);
}

/**
 * Puts the current step's step.run in the outbox. A first dispatch (start, next step, resume
 * after consent) starts the step's stall clock; a re-dispatch of a stalled step (`again`) keeps it.
 */
function dispatchCurrent(task: Task, ctx: TransitionContext, { again = false } = {}): void {
  const step = task.workflow?.[task.current_step];
  if (!step || !task.workflow) return;
  if (!again) task.step_dispatched_at = ctx.now.toISOString();
  const customTool = task.custom_tools?.find((t) => t.name === step.tool);
  const custom = customTool && customStep(customTool, step.action);
  const msg: OutboxMessage<'step.run'> = {
    id: newMessageId(),
    type: 'step.run',
    data: {
      task_id: task._id,
      account_id: task.account_id,
      environment: task.environment,
      user_id: task.user_id,
      step_index: task.current_step,
      step_count: task.workflow.length,
      tool: step.tool,
      action: step.action,
      input: step.input,
      idempotency_key: `${task._id}:${task.current_step}`,
      timeout_ms: ctx.stepTimeoutMs,
      ...(custom ? { custom } : {}),
    },
  };
  task.outbox.push(msg);
}

/**
 * The current step got no result for `stalled` ms (the executor keeps crashing on it, or a service
 * it needs never answers): the task fails, recoverably, like any failure (`task.failed`).
 */
function giveUp(task: Task, workflow: readonly WorkflowStep[], stalled: number, ctx: TransitionContext): void {
  const step = workflow[task.current_step];
  const name = step ? `${step.tool}.${step.action}` : task.tool;
  const seconds = Math.round(stalled / 100) / 10;
  fail(
    task,
    {
      code: 'service_unavailable',
      message: `Step ${task.current_step + 1}/${workflow.length} (${name}) got no result in ${seconds} s, re-dispatches included: the executor, or a service it needs, did not answer`,
      tool: step?.tool ?? task.tool,
      recoverable: true,
      suggestion: 'Create the task again later; if the step has side effects, check whether it took effect first',
    },
    ctx,
  );
}

/** Announces the task's change: one version more, and its `task.event` in the outbox. */
function emit(task: Task, kind: TaskEventKind, extra: Pick<TaskEvent, 'progress' | 'waiting'> = {}): void {
  task.version += 1;
  const data: TaskEvent['task'] = {
    id: task._id,
    account_id: task.account_id,
    environment: task.environment,
    user_id: task.user_id,
    status: task.status,
    tool: task.tool,
    metadata: task.metadata,
    created_at: task.created_at,
    ...(task.completed_at ? { completed_at: task.completed_at } : {}),
    ...(task.failed_at ? { failed_at: task.failed_at } : {}),
    ...(task.cancelled_at ? { cancelled_at: task.cancelled_at } : {}),
    ...(task.result ? { result: task.result } : {}),
    ...(task.error ? { error: task.error } : {}),
    ...(task.planner ? { planner: task.planner } : {}),
  };
  task.outbox.push({
    id: `evt_${task._id}_${task.version}`,
    type: 'task.event',
    partition_key: task.account_id,
    data: { kind, version: task.version, task: data, ...extra },
  });
}

function resultOf(task: Task): Record<string, unknown> {
  const last = task.outputs[task.outputs.length - 1] ?? {};
  if (task.outputs.length <= 1) return last;
  return { ...last, steps: task.outputs };
}

/** Keeps the plan with the task, and the custom tools it uses as they are now, so it runs as planned even if they change. */
function recordPlan(task: Task, workflow: WorkflowStep[], custom: readonly ToolView[]): void {
  task.workflow = workflow;
  const used = custom.filter((t) => workflow.some((s) => s.tool === t.name));
  if (used.length > 0) task.custom_tools = used;
}
