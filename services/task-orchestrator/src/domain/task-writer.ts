import {
  TERMINAL_STATUSES,
  WORKFLOW_MAX_STEPS,
  isoNow,
  newMessageId,
  type ConnectionChanged,
  type StepResult,
  type TaskCancel,
  type TaskCreate,
  type TaskEvent,
  type TaskEventKind,
  type TaskReply,
  type TaskStatus,
  type ToolView,
} from '@tes/contracts';
import { findTool, type ToolDef } from '@tes/catalog';
import type { Logger } from '@tes/logger';
import type { OutboxMessage, TaskDoc, TaskRepository, WorkflowStep } from '../store/task.repository.js';
import type { ToolRepository } from '../store/tool.repository.js';
import { catalogWith, customStep } from './custom-tools.js';
import { missingInputs, previewOf } from './preview.js';
import type { ActiveCounts, PartitionMemory, PublishedOutbox } from './partition-memory.js';
import { planWithRules, type PlanOutcome, type Refusal } from '@tes/planner';

export interface WriterDeps {
  tasks: TaskRepository;
  /** The accounts' custom tools: planned and run like the built-ins. */
  tools: ToolRepository;
  logger: Logger;
  stepTimeoutMs: number;
  /**
   * How long the current step may go without a result (re-dispatches by the reaper included)
   * before the next reconcile gives up on it and fails the task with `service_unavailable`.
   */
  stallGiveUpAfterMs: number;
  /** Publishes a task's outbox with confirms (the writer clears it in the database). */
  relay(doc: TaskDoc): Promise<void>;
  /** How soon published outboxes that no later write has replaced are cleared, in one batch per partition. */
  outboxClearDelayMs?: number;
}

/** The status each task document had when it was read or last written (admission counts follow the changes). */
const stored = new WeakMap<TaskDoc, TaskStatus>();

/**
 * The single writer of tasks. Every change to a task (create, step result, cancel,
 * reconcile) goes through here, serially per account partition, so races such as
 * cancel-vs-completion are decided in one place: the first to be applied wins.
 *
 * Each call gets the PartitionMemory of the message's partition: what this writer knows
 * while it is the partition's active consumer (admission counts, custom tools, the tasks it
 * wrote last, published outboxes), so a task costs fewer database round trips.
 */
export class TaskWriter {
  private readonly memories: PartitionMemory[] = [];

  constructor(private readonly deps: WriterDeps) {}

  /** Registers a partition's memory, so the published outboxes it holds are cleared at shutdown too. */
  remember(memory: PartitionMemory): PartitionMemory {
    this.memories.push(memory);
    return memory;
  }

  /**
   * Records a create: the plan comes with the command (made by the LLM planner outside this turn,
   * messaging/planner.consumer.ts) or from the rules planner here (pure and fast). A refusal is
   * the answer (422 at the gateway). Otherwise one insert carries the task, its plan and, for a
   * running task, the first step (or the test-mode preview) in its outbox; the answer follows the
   * insert. A pending task keeps its plan until it is admitted. A redelivered create (or a second
   * plan for it) finds the task inserted and answers with it.
   */
  async create(mem: PartitionMemory, cmd: TaskCreate, reply: (body: TaskReply) => Promise<void>, correlationId?: string): Promise<void> {
    const custom = await this.customTools(mem, cmd.account_id, cmd.environment);
    const catalog = catalogWith(custom);
    const outcome = cmd.plan ? givenPlan(cmd.plan, catalog) : planWithRules(cmd.prompt, { now: new Date(cmd.created_at), tools: catalog });
    if (!outcome.ok) return reply(refusalReply(outcome.refusal));
    const plan = outcome.plan;
    const missing = missingOf(plan.steps, catalog);
    if (missing.length > 0) return reply(refusalReply(missingRefusal(missing)));
    const tool = findTool(plan.tool, catalog);
    if (!tool) return reply(refusalReply(noTool(`The plan's tool ${plan.tool} is not in the catalog`)));
    if (tool.service && !cmd.user_id) {
      return reply(err('invalid_request', `user_id is required: tool ${tool.name} acts on a user's ${tool.service} account`));
    }
    const { running } = await this.activeCounts(mem, cmd.account_id);
    const doc: TaskDoc = {
      _id: cmd.task_id,
      account_id: cmd.account_id,
      environment: cmd.environment,
      user_id: cmd.user_id ?? null,
      prompt: cmd.prompt,
      metadata: cmd.metadata ?? {},
      mode: cmd.mode,
      status: running < cmd.concurrency_limit ? 'running' : 'pending',
      tool: tool.name,
      planner: plan.planner,
      created_at: cmd.created_at,
      current_step: 0,
      outputs: [],
      concurrency_limit: cmd.concurrency_limit,
      ...(correlationId ? { correlation_id: correlationId } : {}),
      version: 0,
      updated_at: new Date(),
      outbox: [],
    };
    if (doc.status === 'running') doc.started_at = isoNow();
    this.deps.logger.info('task created', {
      task_id: doc._id,
      account_id: doc.account_id,
      status: doc.status,
      tool: doc.tool,
      planner: plan.planner.name,
      ...(plan.planner.fallback_reason ? { fallback_reason: plan.planner.fallback_reason } : {}),
      correlation_id: correlationId,
    });
    emit(doc, 'created');
    const answer = createdReply(doc);
    recordPlan(doc, plan.steps, custom);
    if (doc.status === 'running') this.start(doc);

    if (!(await this.deps.tasks.insert(doc))) {
      await this.answerExisting(mem, cmd, reply);
      return;
    }
    stored.set(doc, doc.status);
    mem.moved(doc.account_id, undefined, doc.status);
    await reply(answer);
    await this.publish(mem, doc);
    if (doc.status !== 'running' && doc.status !== 'pending') await this.admitNext(mem, doc.account_id);
  }

  /**
   * A create whose task is stored already (a redelivered create, a second plan): answers with the
   * task as created and finishes what was left undone. False when no such task exists.
   */
  async answerExisting(mem: PartitionMemory, cmd: TaskCreate, reply: (body: TaskReply) => Promise<void>): Promise<boolean> {
    const existing = await this.deps.tasks.get(cmd.task_id);
    if (!existing) return false;
    if (existing.account_id !== cmd.account_id) {
      await reply(err('invalid_request', 'task id already used'));
      return true;
    }
    await reply(createdReply(existing, 1));
    await this.reconcile(mem, existing._id);
    return true;
  }

  async cancel(mem: PartitionMemory, cmd: TaskCancel, reply: (body: TaskReply) => Promise<void>): Promise<void> {
    const doc = await this.load(mem, cmd.task_id);
    if (!doc || doc.account_id !== cmd.account_id || doc.environment !== cmd.environment) {
      return reply(err('task_not_found', `No task ${cmd.task_id}`));
    }
    if (TERMINAL_STATUSES.includes(doc.status)) {
      return reply(err('task_already_complete', `Task ${doc._id} is already ${doc.status}`));
    }
    const wasRunning = doc.status === 'running';
    doc.status = 'cancelled';
    doc.cancelled_at = isoNow();
    emit(doc, 'cancelled');
    await this.commit(mem, doc);
    await reply({ ok: true, version: doc.version, task: { id: doc._id, status: 'cancelled', cancelled_at: doc.cancelled_at } });
    if (wasRunning) await this.admitNext(mem, doc.account_id);
  }

  async stepResult(mem: PartitionMemory, res: StepResult): Promise<void> {
    const doc = await this.load(mem, res.task_id);
    // Stale, duplicate, or the task ended meanwhile (cancel wins over a late result).
    if (!doc || doc.status !== 'running' || res.step_index !== doc.current_step || !doc.workflow) return;
    const total = doc.workflow.length;
    const step = doc.workflow[res.step_index];
    if (res.outcome === 'complete') {
      doc.outputs[res.step_index] = res.output ?? {};
      if (res.step_index + 1 < total) {
        doc.current_step = res.step_index + 1;
        emit(doc, 'progress', {
          progress: {
            step: `${res.step_index + 1}/${total}`,
            tool: step?.tool ?? doc.tool,
            message: `${step?.tool}.${step?.action} done`,
            progress_pct: Math.round(((res.step_index + 1) / total) * 100),
          },
        });
        this.dispatchCurrent(doc);
        return this.commit(mem, doc);
      }
      doc.status = 'complete';
      doc.completed_at = isoNow();
      doc.result = resultOf(doc);
      emit(doc, 'completed');
    } else if (res.outcome === 'needs_authorization' && res.authorization) {
      doc.status = 'waiting';
      doc.waiting_on = { service: res.authorization.service };
      emit(doc, 'waiting', { waiting: res.authorization });
    } else {
      doc.status = 'failed';
      doc.failed_at = isoNow();
      doc.error = res.error ?? { code: 'step_failed', message: 'step failed', tool: step?.tool ?? doc.tool, recoverable: false };
      emit(doc, 'failed');
    }
    await this.commit(mem, doc);
    await this.admitNext(mem, doc.account_id);
  }

  /**
   * A user's consent flow ended. Authorized: every task of that user waiting on the
   * service resumes from the step that needed it. Denied: they fail, recoverably.
   */
  async connectionChanged(mem: PartitionMemory, ev: ConnectionChanged): Promise<void> {
    if (ev.outcome === 'revoked') return;
    const waiting = await this.deps.tasks.waitingFor(ev.account_id, ev.environment, ev.user_id, ev.service);
    for (const doc of waiting) {
      this.track(mem, doc);
      doc.waiting_on = null;
      if (ev.outcome === 'authorized') {
        doc.status = 'running';
        emit(doc, 'resumed');
        this.dispatchCurrent(doc);
      } else {
        doc.status = 'failed';
        doc.failed_at = isoNow();
        doc.error = {
          code: 'permission_denied',
          message: `The user did not grant access to ${ev.service}`,
          tool: doc.tool,
          recoverable: true,
          suggestion: `Ask the user to authorize ${ev.service} and create the task again`,
        };
        emit(doc, 'failed');
      }
      await this.commit(mem, doc);
    }
    if (ev.outcome === 'denied' && waiting.length > 0) await this.admitNext(mem, ev.account_id);
  }

  /** A custom tool was deleted: the tasks waiting for a user's consent to it can never resume; they fail. */
  async toolDeleted(mem: PartitionMemory, accountId: string, environment: TaskDoc['environment'], name: string): Promise<void> {
    const waiting = await this.deps.tasks.waitingOn(accountId, environment, name);
    for (const doc of waiting) {
      this.track(mem, doc);
      doc.waiting_on = null;
      doc.status = 'failed';
      doc.failed_at = isoNow();
      doc.error = {
        code: 'step_failed',
        message: `The custom tool ${name} was deleted while the task waited for the user's authorization`,
        tool: doc.tool,
        recoverable: false,
      };
      emit(doc, 'failed');
      await this.commit(mem, doc);
    }
    if (waiting.length > 0) await this.admitNext(mem, accountId);
  }

  /**
   * Relays what was not sent and re-dispatches a stalled step (same idempotency key), or, once
   * the step has gone `stallGiveUpAfterMs` without a result since it was first sent, gives up:
   * the task fails. `seenVersion` is the version the reaper saw: a task that moved since is not stalled.
   */
  async reconcile(mem: PartitionMemory, taskId: string, seenVersion?: number): Promise<void> {
    const doc = await this.load(mem, taskId);
    if (!doc) return;
    // A step.run still in the outbox had not gone out (as far as this writer knows): it goes out only now.
    const unsentStep = doc.outbox.some((m) => m.type === 'step.run');
    if (doc.outbox.length > 0) await this.publish(mem, doc);
    if (seenVersion !== undefined && doc.version !== seenVersion) return;
    if (doc.status === 'running' && doc.workflow) {
      // NaN for a task stored before the field existed: its clock starts with this re-dispatch.
      const stalledMs = Date.now() - Date.parse(doc.step_dispatched_at ?? '');
      if (!unsentStep && stalledMs >= this.deps.stallGiveUpAfterMs) return this.giveUp(mem, doc, stalledMs);
      this.dispatchCurrent(doc, { again: !unsentStep && !Number.isNaN(stalledMs) });
      return this.commit(mem, doc);
    }
    return this.advance(mem, doc);
  }

  /**
   * Clears the outboxes published since the last clear that no later write has replaced. An
   * unfinished task's outbox is cleared under the partition's turn, one task per turn (its next
   * message may write the task, and FerretDB v1 applies an update without a lock), so a message
   * waits behind one such update at most. An ended task is never written again by any writer
   * (late messages about it write nothing, a reconcile only publishes), so its outbox is cleared
   * outside the turn, one batch per partition at a time: under load a batch held the partition
   * for up to 0.6 s (bench/latency-breakdown.ts). A clear that fails or never happens costs a
   * duplicate publish later (the reaper's reconcile), nothing more.
   */
  async clearPublished(mem: PartitionMemory): Promise<void> {
    const toClear = await mem.run(async () => {
      clearTimeout(mem.timer);
      mem.timer = undefined;
      if (!mem.valid) {
        mem.forget();
        return [];
      }
      return mem.publishedToClear();
    });
    const ended = toClear.filter((p) => p.ended);
    mem.endedClears = mem.endedClears.then(() => this.clearOutboxes(mem, ended));
    for (const p of toClear) {
      if (p.ended) continue;
      await mem.run(async () => {
        if (!mem.valid) return mem.forget();
        if (mem.isPublished(p.id, p.version)) await this.clearOutboxes(mem, [p]);
      });
    }
    await mem.endedClears;
  }

  /**
   * At shutdown, before the partitions are handed over: clear what this writer published. Waits at
   * most `timeoutMs` (a message still being handled holds its partition's turn).
   */
  async clearAllPublished(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.memories.map((m) => this.clearPublished(m))),
      new Promise((r) => (timer = setTimeout(r, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  private async clearOutboxes(mem: PartitionMemory, list: PublishedOutbox[]): Promise<void> {
    await this.deps.tasks
      .clearOutboxes(list)
      .catch((e: unknown) => this.deps.logger.warn('clearing published outboxes failed', { error: String(e) }));
    for (const p of list) mem.outboxCleared(p.id, p.version);
  }

  /**
   * Moves forward a running task stored without a plan (stored before plans were recorded at
   * create, or a crash case): the rules planner plans it (pure, fast), then it runs or is
   * previewed; a refusal fails it before any step runs.
   */
  private async advance(mem: PartitionMemory, doc: TaskDoc): Promise<void> {
    if (doc.status !== 'running' || doc.workflow) return;
    const custom = await this.customTools(mem, doc.account_id, doc.environment);
    const catalog = catalogWith(custom);
    const outcome = planWithRules(doc.prompt, { now: new Date(doc.created_at), tools: catalog });
    const missing = outcome.ok ? missingOf(outcome.plan.steps, catalog) : [];
    const refusal = !outcome.ok ? outcome.refusal : missing.length > 0 ? missingRefusal(missing) : undefined;
    if (refusal || !outcome.ok) {
      doc.status = 'failed';
      doc.failed_at = isoNow();
      doc.planner = { name: 'rules' };
      const r = refusal ?? noTool('No workflow could be generated for the prompt');
      doc.error = { code: r.code, message: r.message, tool: doc.tool, recoverable: false, suggestion: r.suggestion };
      emit(doc, 'failed');
    } else {
      doc.planner = outcome.plan.planner;
      recordPlan(doc, outcome.plan.steps, custom);
      this.start(doc);
    }
    await this.commit(mem, doc);
    if (doc.status !== 'running') await this.admitNext(mem, doc.account_id);
  }

  /**
   * Starts a running task on its recorded plan: fails it when the plan is too deep, previews it in
   * test mode (complete at once, nothing runs), or puts its first step in the outbox. No I/O.
   */
  private start(doc: TaskDoc): void {
    const workflow = doc.workflow ?? [];
    if (workflow.length > WORKFLOW_MAX_STEPS || workflow.length === 0) {
      doc.status = 'failed';
      doc.failed_at = isoNow();
      doc.error =
        workflow.length === 0
          ? { code: 'no_matching_tool', message: 'No workflow could be generated for the prompt', tool: doc.tool, recoverable: false }
          : {
              code: 'workflow_depth_exceeded',
              message: `The workflow has ${workflow.length} steps; the limit is ${WORKFLOW_MAX_STEPS}`,
              tool: doc.tool,
              recoverable: false,
              suggestion: 'Split the prompt into smaller tasks',
            };
      emit(doc, 'failed');
      return;
    }
    if (doc.mode === 'test') {
      doc.status = 'complete';
      doc.completed_at = isoNow();
      doc.result = { preview: previewOf(doc.tool, workflow, catalogWith(doc.custom_tools ?? [])) };
      emit(doc, 'completed');
      return;
    }
    this.dispatchCurrent(doc);
  }

  /**
   * Puts the current step's step.run in the outbox. A first dispatch (start, next step, resume
   * after consent) starts the step's stall clock; a re-dispatch of a stalled step (`again`) keeps it.
   */
  private dispatchCurrent(doc: TaskDoc, { again = false } = {}): void {
    const step = doc.workflow?.[doc.current_step];
    if (!step || !doc.workflow) return;
    if (!again) doc.step_dispatched_at = isoNow();
    const customTool = doc.custom_tools?.find((t) => t.name === step.tool);
    const custom = customTool && customStep(customTool, step.action);
    const msg: OutboxMessage<'step.run'> = {
      id: newMessageId(),
      type: 'step.run',
      data: {
        task_id: doc._id,
        account_id: doc.account_id,
        environment: doc.environment,
        user_id: doc.user_id,
        step_index: doc.current_step,
        step_count: doc.workflow.length,
        tool: step.tool,
        action: step.action,
        input: step.input,
        idempotency_key: `${doc._id}:${doc.current_step}`,
        timeout_ms: this.deps.stepTimeoutMs,
        ...(custom ? { custom } : {}),
      },
    };
    doc.outbox.push(msg);
  }

  /**
   * The current step got no result for `stalledMs` (the executor keeps crashing on it, or a
   * service it needs never answers): the task fails, recoverably, through the same commit and
   * outbox as any failure (`task.failed`), and its concurrency slot goes to the next pending task.
   */
  private async giveUp(mem: PartitionMemory, doc: TaskDoc, stalledMs: number): Promise<void> {
    const step = doc.workflow?.[doc.current_step];
    const name = step ? `${step.tool}.${step.action}` : doc.tool;
    const seconds = Math.round(stalledMs / 100) / 10;
    doc.status = 'failed';
    doc.failed_at = isoNow();
    doc.error = {
      code: 'service_unavailable',
      message: `Step ${doc.current_step + 1}/${doc.workflow?.length ?? 0} (${name}) got no result in ${seconds} s, re-dispatches included: the executor, or a service it needs, did not answer`,
      tool: step?.tool ?? doc.tool,
      recoverable: true,
      suggestion: 'Create the task again later; if the step has side effects, check whether it took effect first',
    };
    emit(doc, 'failed');
    this.deps.logger.warn('stalled step given up', {
      task_id: doc._id,
      account_id: doc.account_id,
      step_index: doc.current_step,
      stalled_ms: stalledMs,
    });
    await this.commit(mem, doc);
    await this.admitNext(mem, doc.account_id);
  }

  /** Starts the account's oldest pending task if a slot is free. */
  private async admitNext(mem: PartitionMemory, accountId: string): Promise<void> {
    const counts = await this.activeCounts(mem, accountId);
    if (counts.pending === 0) return;
    const next = await this.deps.tasks.oldestPending(accountId);
    if (!next) return mem.unsureOf(accountId);
    this.track(mem, next);
    if (counts.running >= next.concurrency_limit) return;
    next.status = 'running';
    next.started_at = isoNow();
    emit(next, 'started');
    if (!next.workflow) {
      await this.commit(mem, next);
      return this.advance(mem, next);
    }
    // Planned at create: the recorded plan runs (or is previewed) as it is, not planned again.
    this.start(next);
    await this.commit(mem, next);
    if (next.status !== 'running') await this.admitNext(mem, accountId);
  }

  /** Writes the whole task (its outbox included), then publishes the outbox. */
  private async commit(mem: PartitionMemory, doc: TaskDoc): Promise<void> {
    mem.rewritten(doc._id);
    await this.deps.tasks.save(doc);
    const from = stored.get(doc);
    if (from === undefined) mem.unsureOf(doc.account_id);
    else mem.moved(doc.account_id, from, doc.status);
    stored.set(doc, doc.status);
    if (doc.outbox.length > 0) await this.publish(mem, doc);
    else mem.wrote(doc);
  }

  /**
   * Publishes the stored outbox. It stays in the stored document until the task's next write
   * replaces it (usually a step result, milliseconds later) or the partition's batch clear.
   */
  private async publish(mem: PartitionMemory, doc: TaskDoc): Promise<void> {
    await this.deps.relay(doc);
    doc.outbox = [];
    mem.outboxPublished(doc._id, doc.version, TERMINAL_STATUSES.includes(doc.status));
    mem.wrote(doc);
    mem.timer ??= setTimeout(() => void this.clearPublished(mem), this.deps.outboxClearDelayMs ?? 1000).unref();
  }

  /** The task as stored, from this writer's memory or the database; undefined if unknown. */
  private async load(mem: PartitionMemory, id: string): Promise<TaskDoc | undefined> {
    const doc = mem.doc(id) ?? (await this.deps.tasks.get(id)) ?? undefined;
    if (doc) this.track(mem, doc);
    return doc;
  }

  /** Notes a task read from the database: its status (for the counts) and whether its outbox went out already. */
  private track(mem: PartitionMemory, doc: TaskDoc): void {
    if (doc.outbox.length > 0 && mem.isPublished(doc._id, doc.version)) doc.outbox = [];
    stored.set(doc, doc.status);
  }

  private async activeCounts(mem: PartitionMemory, accountId: string): Promise<ActiveCounts> {
    const known = mem.activeCounts(accountId);
    if (known) return known;
    const counts = await this.deps.tasks.countActive(accountId);
    mem.setActiveCounts(accountId, counts);
    return counts;
  }

  private async customTools(mem: PartitionMemory, accountId: string, environment: TaskDoc['environment']): Promise<readonly ToolView[]> {
    const known = mem.customTools(accountId, environment);
    if (known) return known;
    const tools = await this.deps.tools.list(accountId, environment);
    mem.setCustomTools(accountId, environment, tools);
    return tools;
  }
}

function emit(doc: TaskDoc, kind: TaskEventKind, extra: Pick<TaskEvent, 'progress' | 'waiting'> = {}): void {
  doc.version += 1;
  const task: TaskEvent['task'] = {
    id: doc._id,
    account_id: doc.account_id,
    environment: doc.environment,
    user_id: doc.user_id,
    status: doc.status,
    tool: doc.tool,
    metadata: doc.metadata,
    created_at: doc.created_at,
    ...(doc.completed_at ? { completed_at: doc.completed_at } : {}),
    ...(doc.failed_at ? { failed_at: doc.failed_at } : {}),
    ...(doc.cancelled_at ? { cancelled_at: doc.cancelled_at } : {}),
    ...(doc.result ? { result: doc.result } : {}),
    ...(doc.error ? { error: doc.error } : {}),
    ...(doc.planner ? { planner: doc.planner } : {}),
  };
  doc.outbox.push({
    id: `evt_${doc._id}_${doc.version}`,
    type: 'task.event',
    partition_key: doc.account_id,
    data: { kind, version: doc.version, task, ...extra },
  });
}

function resultOf(doc: TaskDoc): Record<string, unknown> {
  const last = doc.outputs[doc.outputs.length - 1] ?? {};
  if (doc.outputs.length <= 1) return last;
  return { ...last, steps: doc.outputs };
}

/** Keeps the plan with the task, and the custom tools it uses as they are now, so it runs as planned even if they change. */
function recordPlan(doc: TaskDoc, workflow: WorkflowStep[], custom: readonly ToolView[]): void {
  doc.workflow = workflow;
  const used = custom.filter((t) => workflow.some((s) => s.tool === t.name));
  if (used.length > 0) doc.custom_tools = used;
}

/** A plan made outside the partition (the LLM planner): its tools must still be in the account's catalog. */
function givenPlan(plan: NonNullable<TaskCreate['plan']>, catalog: readonly ToolDef[]): PlanOutcome {
  const gone = plan.steps.find((s) => !findTool(s.tool, catalog));
  if (gone)
    return { ok: false, refusal: { ...noTool(`The tool ${gone.tool} was removed while the task was planned`), planner: plan.planner } };
  return { ok: true, plan: { tool: plan.tool, steps: plan.steps, planner: plan.planner } };
}

function missingOf(steps: readonly WorkflowStep[], catalog: readonly ToolDef[]): string[] {
  return steps.flatMap((s, i) => missingInputs(s, catalog).map((field) => `step ${i + 1} (${s.tool}.${s.action}): ${field}`));
}

function missingRefusal(missing: string[]): Refusal {
  return {
    code: 'missing_input',
    message: `The request does not say: ${missing.join('; ')}`,
    suggestion: 'Say the missing values in the prompt, for example the subject of an email in quotes',
    missing,
  };
}

function noTool(message: string): Refusal {
  return {
    code: 'no_matching_tool',
    message,
    suggestion: 'Name the service and the action, for example: Create an issue titled "Login fails" in acme/api',
  };
}

/** The create answer: the task as created (version 1), whatever planning did since; `planner` is for the gateway's read model. */
function createdReply(doc: TaskDoc, version = doc.version): TaskReply {
  return {
    ok: true,
    version,
    task: {
      id: doc._id,
      status: doc.status,
      tool: doc.tool,
      created_at: doc.created_at,
      metadata: doc.metadata,
      ...(doc.planner ? { planner: doc.planner } : {}),
    },
  };
}

function err(code: string, message: string): TaskReply {
  return { ok: false, error: { code, message } };
}

/** A refused create: its code (422 at the gateway), what would make the request clear, and what is missing. */
export function refusalReply(r: Refusal): TaskReply {
  return {
    ok: false,
    error: { code: r.code, message: r.message, suggestion: r.suggestion, ...(r.missing?.length ? { missing: r.missing } : {}) },
  };
}
