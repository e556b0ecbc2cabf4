import {
  TERMINAL_STATUSES,
  type ConnectionChanged,
  type StepResult,
  type TaskCancel,
  type TaskCreate,
  type TaskInspect,
  type TaskInspectReply,
  type TaskReply,
  type ToolView,
} from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { Admission } from './admission.js';
import { OutboxClearing } from './outbox-clearing.js';
import type { PartitionMemory } from './partition-memory.js';
import type { TaskStore, ToolStore } from './ports.js';
import { inspection } from './task-inspection.js';
import { planCreate } from './task-plan.js';
import { createdReply, errorReply } from './task-replies.js';
import {
  admit,
  applyConnectionChange,
  applyStepResult,
  cancelTask,
  createTask,
  failOnToolDeleted,
  needsPlan,
  planAndStart,
  reconcileStep,
  stalledMs,
  type TransitionContext,
} from './task-transitions.js';
import type { Task } from './task.js';

export interface WriterDeps {
  tasks: TaskStore;
  /** The accounts' custom tools: planned and run like the built-ins. */
  tools: Pick<ToolStore, 'list'>;
  logger: Logger;
  stepTimeoutMs: number;
  /**
   * How long the current step may go without a result (re-dispatches by the reaper included)
   * before the next reconcile gives up on it and fails the task with `service_unavailable`.
   */
  stallGiveUpAfterMs: number;
  /** Publishes a task's outbox with confirms (the writer clears it in the database). */
  relay(task: Task): Promise<void>;
  /** How soon published outboxes that no later write has replaced are cleared, in one batch per partition. */
  outboxClearDelayMs?: number;
}

type Reply = (body: TaskReply) => Promise<void>;

/**
 * The single writer of tasks. Every change to a task (create, step result, cancel,
 * reconcile) goes through here, in the process that is its account partition's active consumer,
 * so races such as cancel-vs-completion are decided in one place: the first to be applied wins.
 *
 * Within the partition, work runs in lanes (PartitionMemory.task, .account): one at a time per
 * task, and one at a time per account for whatever reads or moves the account's admission counts
 * (a create, a cancel, a change of a task's status, admitting the next pending task) or writes
 * several of its tasks. A step result that leaves its task running (most of them) needs only its
 * task's lane, so the tasks of one account advance side by side; one that ends the task (or makes
 * it wait) is applied again under the account's lane. Lanes nest only account → task.
 *
 * Each change is read (the task), decide (a pure transition, task-transitions.ts), write (one
 * whole-document write with the messages announcing it in its outbox), then publish the outbox;
 * a change that frees a concurrency slot then admits the account's next pending task (admission.ts).
 *
 * Each call gets the PartitionMemory of the message's partition: what this writer knows
 * while it is the partition's active consumer (admission counts, custom tools, the tasks it
 * wrote last, published outboxes), so a task costs fewer database round trips.
 */
export class TaskWriter {
  private readonly admission: Admission;
  private readonly outboxes: OutboxClearing;

  constructor(private readonly deps: WriterDeps) {
    this.admission = new Admission(deps.tasks);
    this.outboxes = new OutboxClearing(deps.tasks, deps.logger, deps.outboxClearDelayMs ?? 1000);
  }

  /** Registers a partition's memory, so the published outboxes it holds are cleared at shutdown too. */
  remember(memory: PartitionMemory): PartitionMemory {
    return this.outboxes.remember(memory);
  }

  /** Before one partition is handed on to another replica: clears the outboxes it published (see OutboxClearing). */
  clearPublished(memory: PartitionMemory): Promise<void> {
    return this.outboxes.clearPublished(memory);
  }

  /** At shutdown, before the partitions are handed over: clears what this writer published (see OutboxClearing). */
  clearAllPublished(timeoutMs?: number): Promise<void> {
    return this.outboxes.clearAll(timeoutMs);
  }

  /**
   * Records a create: planned (task-plan.ts), or refused with the answer. Otherwise one insert
   * carries the task, its plan and, for a running task, the first step (or the test-mode preview)
   * in its outbox; the answer follows the insert. A redelivered create (or a second plan for it)
   * finds the task inserted and answers with it.
   */
  create(mem: PartitionMemory, cmd: TaskCreate, reply: Reply, correlationId?: string): Promise<void> {
    return mem.account(cmd.account_id, () => this.createInLane(mem, cmd, reply, correlationId));
  }

  private async createInLane(mem: PartitionMemory, cmd: TaskCreate, reply: Reply, correlationId?: string): Promise<void> {
    const custom = await this.customTools(mem, cmd.account_id, cmd.environment);
    const planned = planCreate(cmd, custom);
    if (!planned.ok) return reply(planned.reply);
    const { plan } = planned;
    const admitted = await this.admission.admitsNew(mem.counts, cmd.account_id, cmd.concurrency_limit);
    const created = createTask(cmd, { plan, tool: planned.tool.name, custom, admitted, correlationId }, this.context());
    const task = created.task;
    this.deps.logger.info('task created', {
      task_id: task._id,
      account_id: task.account_id,
      status: admitted ? 'running' : 'pending',
      tool: task.tool,
      planner: plan.planner.name,
      ...(plan.planner.fallback_reason ? { fallback_reason: plan.planner.fallback_reason } : {}),
      correlation_id: correlationId,
    });
    if (!(await this.deps.tasks.insert(task))) {
      await this.answerExistingInLane(mem, cmd, reply);
      return;
    }
    mem.counts.moved(task.account_id, undefined, task.status);
    await reply(created.reply);
    await this.publish(mem, task);
    if (task.status !== 'running' && task.status !== 'pending') await this.admitNext(mem, task.account_id);
  }

  /**
   * A create whose task is stored already (a redelivered create, a second plan): answers with the
   * task as created and finishes what was left undone. False when no such task exists.
   */
  answerExisting(mem: PartitionMemory, cmd: TaskCreate, reply: Reply): Promise<boolean> {
    return mem.account(cmd.account_id, () => this.answerExistingInLane(mem, cmd, reply));
  }

  private async answerExistingInLane(mem: PartitionMemory, cmd: TaskCreate, reply: Reply): Promise<boolean> {
    const existing = await this.deps.tasks.get(cmd.task_id);
    if (!existing) return false;
    if (existing.account_id !== cmd.account_id) {
      await reply(errorReply('invalid_request', 'task id already used'));
      return true;
    }
    await reply(createdReply(existing, 1));
    await this.reconcileInLane(mem, existing.account_id, existing._id);
    return true;
  }

  /** The dashboard's read of a task (see inspection): in the partition's order, so it sees every change before it. */
  inspect(mem: PartitionMemory, q: TaskInspect, reply: (body: TaskInspectReply) => Promise<void>): Promise<void> {
    return mem.task(q.task_id, async () => {
      const task = await this.load(mem, q.task_id);
      if (!task || task.account_id !== q.account_id || task.environment !== q.environment) {
        return reply({ ok: false, error: { code: 'task_not_found', message: `no task ${q.task_id}` } });
      }
      return reply({ ok: true, task: inspection(task, this.deps.stepTimeoutMs) });
    });
  }

  cancel(mem: PartitionMemory, cmd: TaskCancel, reply: Reply): Promise<void> {
    return mem.account(cmd.account_id, async () => {
      const wasRunning = await mem.task(cmd.task_id, async () => {
        const task = await this.load(mem, cmd.task_id);
        const cancel = cancelTask(task, cmd, this.context());
        if (!task || !cancel.task) {
          await reply(cancel.reply);
          return false;
        }
        await this.commit(mem, task, cancel.task);
        await reply(cancel.reply);
        return task.status === 'running';
      });
      if (wasRunning) await this.admitNext(mem, cmd.account_id);
    });
  }

  /**
   * In the task's lane when the task stays running; a result that changes its status (it ends,
   * or waits for consent) is applied under the account's lane, which admits the next: at once when
   * the message says so (a last step, a failure), else after the task's lane found it out.
   */
  async stepResult(mem: PartitionMemory, res: StepResult): Promise<void> {
    // A result that will end its task (its last step, or not complete) goes to the account's lane at once.
    const steps = mem.stepCount(res.task_id);
    const likelyEnds = steps === undefined || res.outcome !== 'complete' || res.step_index + 1 >= steps;
    const settled =
      !likelyEnds &&
      (await mem.task(res.task_id, async () => {
        const task = await this.load(mem, res.task_id);
        const next = task && applyStepResult(task, res, this.context());
        if (!task || !next) return true;
        if (next.status !== task.status) return false;
        await this.commit(mem, task, next);
        return true;
      }));
    if (settled) return;
    await mem.account(res.account_id, async () => {
      const changed = await mem.task(res.task_id, async () => {
        const task = await this.load(mem, res.task_id);
        const next = task && applyStepResult(task, res, this.context());
        if (!task || !next) return false;
        await this.commit(mem, task, next);
        return next.status !== 'running';
      });
      if (changed) await this.admitNext(mem, res.account_id);
    });
  }

  /**
   * A user's consent flow ended. Authorized: every task of that user waiting on the
   * service resumes from the step that needed it. Denied: they fail, recoverably.
   */
  connectionChanged(mem: PartitionMemory, ev: ConnectionChanged): Promise<void> {
    if (ev.outcome === 'revoked') return Promise.resolve(); // changes no task: nothing to read
    return mem.account(ev.account_id, async () => {
      const waiting = await this.deps.tasks.waitingFor(ev.account_id, ev.environment, ev.user_id, ev.service);
      for (const read of waiting) await this.rewriteRead(mem, read, (task) => applyConnectionChange(task, ev, this.context()));
      if (ev.outcome === 'denied' && waiting.length > 0) await this.admitNext(mem, ev.account_id);
    });
  }

  /** A custom tool was deleted: the tasks waiting for a user's consent to it can never resume; they fail. */
  toolDeleted(mem: PartitionMemory, accountId: string, environment: Task['environment'], name: string): Promise<void> {
    return mem.account(accountId, async () => {
      const waiting = await this.deps.tasks.waitingOn(accountId, environment, name);
      for (const read of waiting) await this.rewriteRead(mem, read, (task) => failOnToolDeleted(task, name, this.context()));
      if (waiting.length > 0) await this.admitNext(mem, accountId);
    });
  }

  /** In the task's lane: `change` applied to the task as this writer last wrote it (else as read), and committed. */
  private rewriteRead(mem: PartitionMemory, read: Task, change: (task: Task) => Task | undefined): Promise<void> {
    return mem.task(read._id, async () => {
      const task = this.unpublished(mem, mem.doc(read._id) ?? read);
      const next = change(task);
      if (next) await this.commit(mem, task, next);
    });
  }

  /**
   * Relays what was not sent and re-dispatches a stalled step (same idempotency key), or, once
   * the step has gone `stallGiveUpAfterMs` without a result since it was first sent, gives up:
   * the task fails. `seenVersion` is the version the reaper saw: a task that moved since is not stalled.
   */
  reconcile(mem: PartitionMemory, accountId: string, taskId: string, seenVersion?: number): Promise<void> {
    return mem.account(accountId, () => this.reconcileInLane(mem, accountId, taskId, seenVersion));
  }

  /** Under the account's lane. */
  private async reconcileInLane(mem: PartitionMemory, accountId: string, taskId: string, seenVersion?: number): Promise<void> {
    const freed = await mem.task(taskId, async () => {
      const read = await this.load(mem, taskId);
      if (!read) return false;
      // A step.run still in the outbox had not gone out (as far as this writer knows): it goes out only now.
      const unsentStep = read.outbox.some((m) => m.type === 'step.run');
      const task = read.outbox.length > 0 ? await this.publish(mem, read) : read;
      if (seenVersion !== undefined && task.version !== seenVersion) return false;
      const ctx = this.context();
      const next = reconcileStep(task, { unsentStep, giveUpAfterMs: this.deps.stallGiveUpAfterMs }, ctx);
      if (!next) return this.advance(mem, task);
      const gaveUp = next.status === 'failed';
      if (gaveUp) {
        this.deps.logger.warn('stalled step given up', {
          task_id: task._id,
          account_id: task.account_id,
          step_index: task.current_step,
          stalled_ms: stalledMs(task, ctx.now),
        });
      }
      await this.commit(mem, task, next);
      return gaveUp;
    });
    // Its concurrency slot goes to the next pending task.
    if (freed) await this.admitNext(mem, accountId);
  }

  /** Plans and starts a running task stored without a plan (see planAndStart), in its lane. True when it stopped running. */
  private async advance(mem: PartitionMemory, task: Task): Promise<boolean> {
    if (!needsPlan(task)) return false;
    const custom = await this.customTools(mem, task.account_id, task.environment);
    const next = planAndStart(task, custom, this.context());
    if (!next) return false;
    await this.commit(mem, task, next);
    return next.status !== 'running';
  }

  /**
   * Under the account's lane: starts the account's oldest pending task if a slot is free (in that
   * task's lane), and the next one while the one started ended at once.
   */
  private async admitNext(mem: PartitionMemory, accountId: string): Promise<void> {
    for (;;) {
      const oldest = await this.admission.next(mem.counts, accountId);
      if (!oldest) return;
      const endedAtOnce = await mem.task(oldest._id, async () => {
        const pending = this.unpublished(mem, oldest);
        const started = admit(pending, this.context());
        if (!started) return false;
        const stored = await this.commit(mem, pending, started);
        if (!started.workflow) return this.advance(mem, stored);
        return started.status !== 'running';
      });
      if (!endedAtOnce) return;
    }
  }

  /**
   * Writes the whole task (its outbox included) that `before` became, then publishes the outbox.
   * Answers the task as it now is (its outbox published).
   */
  private async commit(mem: PartitionMemory, before: Task, task: Task): Promise<Task> {
    mem.rewritten(task._id);
    await this.deps.tasks.save(task);
    mem.counts.moved(task.account_id, before.status, task.status);
    if (task.outbox.length > 0) return this.publish(mem, task);
    mem.wrote(task);
    return task;
  }

  /**
   * Publishes the stored outbox. It stays in the stored document until the task's next write
   * replaces it (usually a step result, milliseconds later) or the partition's batch clear.
   */
  private async publish(mem: PartitionMemory, task: Task): Promise<Task> {
    await this.deps.relay(task);
    const sent: Task = { ...task, outbox: [] };
    mem.outboxPublished(task._id, task.version, TERMINAL_STATUSES.includes(task.status));
    mem.wrote(sent);
    this.outboxes.published(mem);
    return sent;
  }

  /** The task as stored, from this writer's memory or the database; undefined if unknown. */
  private async load(mem: PartitionMemory, id: string): Promise<Task | undefined> {
    const task = mem.doc(id) ?? (await this.deps.tasks.get(id)) ?? undefined;
    return task && this.unpublished(mem, task);
  }

  /** A task as read, without the stored outbox this writer knows it published already. */
  private unpublished(mem: PartitionMemory, task: Task): Task {
    return task.outbox.length > 0 && mem.isPublished(task._id, task.version) ? { ...task, outbox: [] } : task;
  }

  private async customTools(mem: PartitionMemory, accountId: string, environment: Task['environment']): Promise<readonly ToolView[]> {
    const known = mem.customTools(accountId, environment);
    if (known) return known;
    const tools = await this.deps.tools.list(accountId, environment);
    mem.setCustomTools(accountId, environment, tools);
    return tools;
  }

  private context(): TransitionContext {
    return { now: new Date(), stepTimeoutMs: this.deps.stepTimeoutMs };
  }
}
