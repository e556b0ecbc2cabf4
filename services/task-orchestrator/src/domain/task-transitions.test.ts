import fc from 'fast-check';
import type { StepResult, TaskCreate, TaskStatus, ToolView } from '@tes/contracts';
import type { Plan } from '@tes/planner';
import type { OutboxMessage, Task, WorkflowStep } from './task.js';
import {
  admit,
  applyConnectionChange,
  applyStepResult,
  cancelTask,
  createTask,
  failOnToolDeleted,
  planAndStart,
  reconcileStep,
  type TransitionContext,
} from './task-transitions.js';

const T0 = new Date('2026-03-01T10:00:00.000Z');
const at = (ms: number): TransitionContext => ({ now: new Date(T0.getTime() + ms), stepTimeoutMs: 5000 });
const ctx = at(0);

const echo: WorkflowStep = { tool: 'text', action: 'echo', input: { text: 'hi' } };
const upper: WorkflowStep = { tool: 'text', action: 'uppercase', input: { text: 'hi' } };
const post: WorkflowStep = { tool: 'slack', action: 'post_message', input: { channel: '#eng', text: '{{steps.0.output.text}}' } };

function command(extra: Partial<TaskCreate> = {}): TaskCreate {
  return {
    task_id: 'task_1',
    account_id: 'acct_1',
    environment: 'test',
    prompt: 'Echo "hi"',
    user_id: 'u1',
    metadata: { order: 7 },
    mode: 'live',
    created_at: T0.toISOString(),
    concurrency_limit: 2,
    ...extra,
  };
}

function plan(steps: WorkflowStep[], tool = steps[0]?.tool ?? 'text'): Plan {
  return { tool, steps, planner: { name: 'rules' } };
}

/** A task created (and, when admitted, started) on `steps`, with its outbox as published. */
function created(steps: WorkflowStep[] = [echo], opts: { admitted?: boolean; mode?: 'live' | 'test'; custom?: ToolView[] } = {}): Task {
  const { task } = createTask(
    command({ mode: opts.mode ?? 'live' }),
    { plan: plan(steps), tool: steps[0]?.tool ?? 'text', custom: opts.custom ?? [], admitted: opts.admitted ?? true },
    ctx,
  );
  return sent(task);
}

/** The task after its outbox was published (what the writer keeps). */
const sent = (task: Task): Task => ({ ...task, outbox: [] });

const events = (task: Task) => task.outbox.filter((m): m is OutboxMessage<'task.event'> => m.type === 'task.event').map((m) => m.data);
const kinds = (task: Task) => events(task).map((e) => e.kind);
const stepRuns = (task: Task) => task.outbox.filter((m): m is OutboxMessage<'step.run'> => m.type === 'step.run').map((m) => m.data);

function result(task: Task, outcome: StepResult['outcome'], extra: Partial<StepResult> = {}): StepResult {
  return {
    task_id: task._id,
    account_id: task.account_id,
    environment: task.environment,
    step_index: task.current_step,
    outcome,
    duration_ms: 3,
    ...extra,
  };
}

const authorization = {
  reason: 'not_connected',
  service: 'slack',
  auth_url: 'https://vault.example/connect/slack',
  message: 'Connect Slack',
};

/** A task running `steps`, paused on step `index` for the user's consent to slack. */
function waitingOnSlack(steps: WorkflowStep[] = [echo, post]): Task {
  let task = created(steps);
  while (task.current_step < steps.length - 1)
    task = sent(applyStepResult(task, result(task, 'complete', { output: { text: 'hi' } }), ctx)!);
  return sent(applyStepResult(task, result(task, 'needs_authorization', { authorization }), ctx)!);
}

describe('task transitions: the rows of the specification (section 3)', () => {
  it('(none) -> running on a valid create: answered as running at version 1, announced, its first step sent', () => {
    const { task, reply } = createTask(command(), { plan: plan([echo, upper]), tool: 'text', custom: [], admitted: true }, ctx);
    expect(reply).toEqual({
      ok: true,
      version: 1,
      task: {
        id: 'task_1',
        status: 'running',
        tool: 'text',
        created_at: T0.toISOString(),
        metadata: { order: 7 },
        planner: { name: 'rules' },
      },
    });
    expect(task).toMatchObject({
      status: 'running',
      version: 1,
      started_at: T0.toISOString(),
      step_dispatched_at: T0.toISOString(),
      workflow: [echo, upper],
    });
    expect(kinds(task)).toEqual(['created']);
    expect(stepRuns(task)).toEqual([
      expect.objectContaining({
        step_index: 0,
        step_count: 2,
        tool: 'text',
        action: 'echo',
        idempotency_key: 'task_1:0',
        timeout_ms: 5000,
      }),
    ]);
    expect(task.outbox.map((m) => m.type)).toEqual(['task.event', 'step.run']);
  });

  it('running -> waiting when the step needs an authorization the user has not given: task.waiting carries the auth_url', () => {
    const task = created([post]);
    const next = applyStepResult(task, result(task, 'needs_authorization', { authorization }), ctx)!;
    expect(next).toMatchObject({ status: 'waiting', waiting_on: { service: 'slack' }, version: 2 });
    expect(events(next)).toEqual([expect.objectContaining({ kind: 'waiting', version: 2, waiting: authorization })]);
    expect(stepRuns(next)).toEqual([]);
  });

  it('waiting -> running when the user grants consent: the step that needed it is sent again', () => {
    const task = waitingOnSlack();
    const next = applyConnectionChange(task, { outcome: 'authorized', service: 'slack' }, at(5000))!;
    expect(next).toMatchObject({ status: 'running', waiting_on: null, current_step: 1, step_dispatched_at: at(5000).now.toISOString() });
    expect(kinds(next)).toEqual(['resumed']);
    expect(stepRuns(next)).toEqual([
      expect.objectContaining({ step_index: 1, tool: 'slack', action: 'post_message', idempotency_key: 'task_1:1' }),
    ]);
  });

  it('running -> complete when the last step succeeds: completed_at and result set, task.completed announced', () => {
    const task = created([echo]);
    const next = applyStepResult(task, result(task, 'complete', { output: { text: 'hi' } }), at(10))!;
    expect(next).toMatchObject({ status: 'complete', completed_at: at(10).now.toISOString(), result: { text: 'hi' } });
    expect(events(next)).toEqual([
      expect.objectContaining({ kind: 'completed', task: expect.objectContaining({ status: 'complete', result: { text: 'hi' } }) }),
    ]);
  });

  it('running -> failed when the step fails: failed_at and the step error set, task.failed announced', () => {
    const task = created([echo]);
    const error = { code: 'service_unavailable', message: '503 after 3 attempts', tool: 'text', recoverable: true };
    const next = applyStepResult(task, result(task, 'failed', { error }), at(10))!;
    expect(next).toMatchObject({ status: 'failed', failed_at: at(10).now.toISOString(), error });
    expect(events(next)).toEqual([expect.objectContaining({ kind: 'failed', task: expect.objectContaining({ error }) })]);
  });

  it.each<[string, () => Task]>([
    ['pending', () => created([echo], { admitted: false })],
    ['running', () => created([echo])],
    ['waiting', () => waitingOnSlack([post])],
  ])('%s -> cancelled on cancel: the answer carries cancelled_at', (status, make) => {
    const task = make();
    expect(task.status).toBe(status);
    const { reply, task: next } = cancelTask(task, command(), at(20));
    const cancelled_at = at(20).now.toISOString();
    expect(next).toMatchObject({ status: 'cancelled', cancelled_at, version: task.version + 1 });
    expect(reply).toEqual({ ok: true, version: task.version + 1, task: { id: 'task_1', status: 'cancelled', cancelled_at } });
    expect(kinds(next!)).toEqual(['cancelled']);
  });

  it.each<[TaskStatus, () => Task]>([
    ['complete', () => sent(applyStepResult(created(), result(created(), 'complete'), ctx)!)],
    ['failed', () => sent(applyStepResult(created(), result(created(), 'failed'), ctx)!)],
    ['cancelled', () => sent(cancelTask(created(), command(), ctx).task!)],
  ])('%s: a cancel answers task_already_complete and changes nothing', (status, make) => {
    const task = make();
    expect(task.status).toBe(status);
    expect(cancelTask(task, command(), ctx)).toEqual({
      reply: { ok: false, error: { code: 'task_already_complete', message: `Task task_1 is already ${status}` } },
    });
  });
});

describe('task transitions the service adds', () => {
  it('holds a create over the concurrency limit as pending, its plan kept and no step sent', () => {
    const { task, reply } = createTask(command(), { plan: plan([echo]), tool: 'text', custom: [], admitted: false }, ctx);
    expect(task).toMatchObject({ status: 'pending', workflow: [echo], version: 1 });
    expect(task.started_at).toBeUndefined();
    expect(reply).toMatchObject({ ok: true, task: { status: 'pending' } });
    expect(kinds(task)).toEqual(['created']);
    expect(stepRuns(task)).toEqual([]);
  });

  it('pending -> running on admission: started on its recorded plan, its first step sent', () => {
    const next = admit(created([echo, upper], { admitted: false }), at(30))!;
    expect(next).toMatchObject({ status: 'running', started_at: at(30).now.toISOString(), version: 2 });
    expect(kinds(next)).toEqual(['started']);
    expect(stepRuns(next)).toEqual([expect.objectContaining({ step_index: 0, action: 'echo' })]);
  });

  it('admits a pending task stored without a plan as started only; planAndStart then plans it with the rules', () => {
    const { workflow: _, ...unplanned } = created([echo], { admitted: false });
    const started = sent(admit(unplanned, ctx)!);
    expect(started).toMatchObject({ status: 'running', version: 2 });
    expect(stepRuns(admit(unplanned, ctx)!)).toEqual([]);
    const planned = planAndStart(started, [], ctx)!;
    expect(planned.workflow).toEqual([{ tool: 'text', action: 'echo', input: { text: 'hi' } }]);
    expect(stepRuns(planned)).toEqual([expect.objectContaining({ step_index: 0, action: 'echo' })]);
    expect(planned.version).toBe(2);
  });

  it('fails a task stored without a plan whose prompt the rules planner refuses, before any step runs', () => {
    const { workflow: _, ...unplanned } = created([echo]);
    const next = planAndStart({ ...unplanned, prompt: 'zzz qqq' }, [], ctx)!;
    expect(next).toMatchObject({ status: 'failed', planner: { name: 'rules' }, error: { code: 'no_matching_tool', recoverable: false } });
    expect(kinds(next)).toEqual(['failed']);
  });

  it('completes a test-mode task at once with a preview of its plan, sending no step', () => {
    const task = createTask(command({ mode: 'test' }), { plan: plan([echo, upper]), tool: 'text', custom: [], admitted: true }, ctx).task;
    expect(task.status).toBe('complete');
    expect(task.result).toEqual({
      preview: {
        tool: 'text',
        steps: [expect.objectContaining({ action: 'echo' }), expect.objectContaining({ action: 'uppercase' })],
        derived: [],
      },
    });
    expect(kinds(task)).toEqual(['created', 'completed']);
    expect(stepRuns(task)).toEqual([]);
  });

  it('shows in the preview the values the planner derived rather than read', () => {
    const derived = ['step 0 subject: "The deck is ready" (from the message)'];
    const withDerived = { ...plan([echo]), planner: { name: 'rules' as const, derived } };
    const task = createTask(command({ mode: 'test' }), { plan: withDerived, tool: 'text', custom: [], admitted: true }, ctx).task;
    expect(task.result).toMatchObject({ preview: { derived } });
    expect(task.planner).toEqual({ name: 'rules', derived });
  });

  it('fails a plan deeper than 50 steps with workflow_depth_exceeded', () => {
    const task = created(Array.from({ length: 51 }, () => echo));
    expect(task).toMatchObject({ status: 'failed', error: { code: 'workflow_depth_exceeded', recoverable: false } });
  });

  it('dispatches the next step when a step completes: task.progress, then the next step.run with its own idempotency key', () => {
    const task = created([echo, upper]);
    const next = applyStepResult(task, result(task, 'complete', { output: { text: 'hi' } }), at(40))!;
    expect(next).toMatchObject({
      status: 'running',
      current_step: 1,
      outputs: [{ text: 'hi' }],
      step_dispatched_at: at(40).now.toISOString(),
    });
    expect(events(next)).toEqual([
      expect.objectContaining({ kind: 'progress', progress: { step: '1/2', tool: 'text', message: 'text.echo done', progress_pct: 50 } }),
    ]);
    expect(stepRuns(next)).toEqual([expect.objectContaining({ step_index: 1, action: 'uppercase', idempotency_key: 'task_1:1' })]);
    const done = applyStepResult(sent(next), result(next, 'complete', { output: { text: 'HI' } }), ctx)!;
    expect(done.result).toEqual({ text: 'HI', steps: [{ text: 'hi' }, { text: 'HI' }] });
  });

  it('ignores a stale or duplicate step result', () => {
    const task = sent(applyStepResult(created([echo, upper]), result(created([echo, upper]), 'complete'), ctx)!);
    expect(applyStepResult(task, { ...result(task, 'complete'), step_index: 0 }, ctx)).toBeUndefined();
    expect(applyStepResult(task, { ...result(task, 'failed'), step_index: 5 }, ctx)).toBeUndefined();
  });

  it('waiting -> failed with permission_denied, recoverably, when the user denies consent', () => {
    const next = applyConnectionChange(waitingOnSlack(), { outcome: 'denied', service: 'slack' }, ctx)!;
    expect(next).toMatchObject({ status: 'failed', waiting_on: null, error: { code: 'permission_denied', recoverable: true } });
    expect(kinds(next)).toEqual(['failed']);
  });

  it('changes nothing on a revoked connection, or a consent to another service', () => {
    expect(applyConnectionChange(waitingOnSlack(), { outcome: 'revoked', service: 'slack' }, ctx)).toBeUndefined();
    expect(applyConnectionChange(waitingOnSlack(), { outcome: 'authorized', service: 'github' }, ctx)).toBeUndefined();
  });

  it('fails a task waiting for consent to a custom tool that was deleted', () => {
    const next = failOnToolDeleted(waitingOnSlack(), 'slack', ctx)!;
    expect(next).toMatchObject({ status: 'failed', error: { code: 'step_failed', recoverable: false } });
  });

  it('re-dispatches a stalled step with the same idempotency key, keeping its stall clock', () => {
    const task = created([echo]);
    const next = reconcileStep(task, { unsentStep: false, giveUpAfterMs: 600_000 }, at(60_000))!;
    expect(next).toMatchObject({ status: 'running', version: task.version, step_dispatched_at: T0.toISOString() });
    expect(next.outbox.map((m) => m.type)).toEqual(['step.run']);
    expect(stepRuns(next)[0]?.idempotency_key).toBe('task_1:0');
  });

  it('running -> failed with service_unavailable, recoverably, once the step has gone without a result past the give-up', () => {
    const next = reconcileStep(created([echo]), { unsentStep: false, giveUpAfterMs: 600_000 }, at(600_000))!;
    expect(next).toMatchObject({
      status: 'failed',
      failed_at: at(600_000).now.toISOString(),
      error: { code: 'service_unavailable', recoverable: true },
    });
    expect(next.error?.message).toContain('Step 1/1 (text.echo) got no result in 600 s');
    expect(kinds(next)).toEqual(['failed']);
  });

  it('never gives up on a step whose step.run had not gone out yet: it goes out now', () => {
    const next = reconcileStep(created([echo]), { unsentStep: true, giveUpAfterMs: 1 }, at(600_000))!;
    expect(next).toMatchObject({ status: 'running', step_dispatched_at: at(600_000).now.toISOString() });
  });

  it('answers task_not_found for a task of another account or environment', () => {
    const task = created();
    for (const cmd of [command({ account_id: 'acct_2' }), command({ environment: 'live' })]) {
      expect(cancelTask(task, cmd, ctx).reply).toMatchObject({ ok: false, error: { code: 'task_not_found' } });
    }
    expect(cancelTask(undefined, command(), ctx).reply).toMatchObject({ ok: false, error: { code: 'task_not_found' } });
  });
});

/** Every input the writer may apply, for the invariants below. */
type Input =
  | { kind: 'admit' }
  | { kind: 'plan' }
  | { kind: 'result'; outcome: StepResult['outcome']; stale: boolean }
  | { kind: 'consent'; outcome: 'authorized' | 'denied' | 'revoked' }
  | { kind: 'tool_deleted' }
  | { kind: 'cancel' }
  | { kind: 'reconcile'; unsentStep: boolean; afterMs: number };

const input: fc.Arbitrary<Input> = fc.oneof(
  fc.constant<Input>({ kind: 'admit' }),
  fc.constant<Input>({ kind: 'plan' }),
  fc.record({
    kind: fc.constant('result' as const),
    outcome: fc.constantFrom('complete' as const, 'failed' as const, 'needs_authorization' as const),
    stale: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('consent' as const),
    outcome: fc.constantFrom('authorized' as const, 'denied' as const, 'revoked' as const),
  }),
  fc.constant<Input>({ kind: 'tool_deleted' }),
  fc.constant<Input>({ kind: 'cancel' }),
  fc.record({ kind: fc.constant('reconcile' as const), unsentStep: fc.boolean(), afterMs: fc.constantFrom(1000, 700_000) }),
);

function apply(task: Task, i: Input): Task | undefined {
  const c = at(i.kind === 'reconcile' ? i.afterMs : 0);
  switch (i.kind) {
    case 'admit':
      return admit(task, c);
    case 'plan':
      return planAndStart(task, [], c);
    case 'result': {
      const r = result(task, i.outcome, i.outcome === 'needs_authorization' ? { authorization } : { output: { text: 'x' } });
      return applyStepResult(task, i.stale ? { ...r, step_index: task.current_step + 1 } : r, c);
    }
    case 'consent':
      return applyConnectionChange(task, { outcome: i.outcome, service: 'slack' }, c);
    case 'tool_deleted':
      return failOnToolDeleted(task, 'slack', c);
    case 'cancel':
      return cancelTask(task, command(), c).task;
    case 'reconcile':
      return reconcileStep(task, { unsentStep: i.unsentStep, giveUpAfterMs: 600_000 }, c);
  }
}

describe('task transitions: invariants over any sequence of inputs', () => {
  const start = fc.record({
    admitted: fc.boolean(),
    steps: fc.integer({ min: 1, max: 4 }),
    mode: fc.constantFrom('live' as const, 'test' as const),
  });

  it('moves the version by one per event, without gaps; never changes the task it is given; never changes an ended task', () => {
    fc.assert(
      fc.property(start, fc.array(input, { maxLength: 12 }), (s, inputs) => {
        let task = created(
          Array.from({ length: s.steps }, (_, i) => (i % 2 ? post : echo)),
          { admitted: s.admitted, mode: s.mode },
        );
        for (const i of inputs) {
          const before = structuredClone(task);
          const next = apply(task, i);
          expect(task).toEqual(before);
          if (TERMINAL.includes(before.status)) expect(next).toBeUndefined();
          if (!next) continue;
          const added = events(next);
          expect(added.map((e) => e.version)).toEqual(added.map((_, n) => before.version + n + 1));
          expect(next.version).toBe(before.version + added.length);
          task = sent(next);
        }
      }),
      { numRuns: 300 },
    );
  });
});

const TERMINAL: readonly TaskStatus[] = ['complete', 'failed', 'cancelled'];
