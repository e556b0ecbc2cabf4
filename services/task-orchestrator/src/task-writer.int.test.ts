import mongoose from 'mongoose';
import { EXCHANGES, newId, partitionOf, type StepResult, type StepRun, type TaskEvent, type TaskReply } from '@tes/contracts';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes } from '@tes/store';
import { AMQP_URL, MONGO_URL, memoryLogger, uniqueName, waitFor } from '@tes/testing';
import { TaskWriter } from './domain/task-writer.js';
import { outboxRelay } from './messaging/outbox-relay.js';
import { consumePartitions } from './messaging/partition.consumer.js';
import { consumePlanner } from './messaging/planner.consumer.js';
import type { LlmPlannerOptions } from '@tes/planner';
import { startModelServer, type ModelServer } from '../../../test/support/model-server.js';
import { startReaper } from './jobs/reaper.js';
import { TaskRepository } from './store/task.repository.js';
import { ToolAdmin } from './domain/tool-admin.js';
import { ToolRepository } from './store/tool.repository.js';

type Logger = ReturnType<typeof memoryLogger>['logger'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The orchestrator's single writer, in-process, over the real broker and database, in its own
 * namespace and database: a test "executor" records step.run commands and a test listener
 * records task events. With `reaper`, the real reaper runs too.
 */
async function startOrchestrator(
  logger: Logger,
  opts: {
    stallGiveUpAfterMs?: number;
    reaper?: { stallAfterMs: number; intervalMs: number };
    /** Batches published outboxes for this long before clearing them (the writer's default: 1 s). */
    outboxClearDelayMs?: number;
    /** Every clear of published outboxes first waits this long (a database slow to update). */
    slowClearMs?: number;
    /** Saves of these tasks first wait this long (one task's writes slow, the others' not). */
    slowSaves?: SlowSaves['slow'];
    /** The LLM planner: creates are planned by the planner consumer, outside the partitions. */
    llm?: LlmPlannerOptions;
  } = {},
) {
  const namespace = uniqueName('orch');
  const steps: StepRun[] = [];
  const events: TaskEvent[] = [];
  const mongo = await connectMongo({ url: MONGO_URL, dbName: namespace, logger });
  const tasks =
    opts.slowClearMs !== undefined
      ? new SlowClears(mongo, opts.slowClearMs)
      : opts.slowSaves
        ? new SlowSaves(mongo, opts.slowSaves)
        : new TaskRepository(mongo);
  const tools = new ToolRepository(mongo);
  await ensureIndexes(mongo);
  const broker = new Broker({ url: AMQP_URL, source: 'orchestrator', logger, namespace });
  await broker.connect();
  const writer = new TaskWriter({
    tasks,
    tools,
    logger,
    stepTimeoutMs: 5000,
    stallGiveUpAfterMs: opts.stallGiveUpAfterMs ?? 600_000,
    relay: outboxRelay(broker),
    ...(opts.outboxClearDelayMs !== undefined ? { outboxClearDelayMs: opts.outboxClearDelayMs } : {}),
  });
  if (opts.llm) await consumePlanner({ broker, tools, llm: opts.llm, logger, concurrency: 4 });
  const group = await consumePartitions(broker, writer, new ToolAdmin(tools, logger), 16, {
    replica: 'writer-test',
    logger,
    planWithModel: opts.llm !== undefined,
  });
  const stopReaper = opts.reaper ? startReaper({ broker, tasks, logger, ...opts.reaper }) : () => undefined;

  const client = new Broker({ url: AMQP_URL, source: 'test', logger, namespace });
  await client.connect();
  await client.consume({ name: 'test.steps', exchange: EXCHANGES.commands, bindings: ['executor.steps'] }, async (d) => {
    steps.push(d.data as StepRun);
  });
  await client.consume({ name: 'test.events', exchange: EXCHANGES.events, bindings: ['task.event.#'] }, async (d) => {
    events.push(d.data as TaskEvent);
  });

  return {
    mongo,
    tasks,
    client,
    steps,
    events,
    async stop() {
      stopReaper();
      group.stop();
      await client.close();
      await broker.close();
      await mongo.dropDatabase();
      await mongo.close();
    },
  };
}
type Orchestrator = Awaited<ReturnType<typeof startOrchestrator>>;

/** The real repository, whose outbox clears each start `delayMs` late. */
class SlowClears extends TaskRepository {
  constructor(
    conn: mongoose.Connection,
    private readonly delayMs: number,
  ) {
    super(conn);
  }

  override async clearOutboxes(published: readonly { id: string; version: number }[], opts?: { ended?: boolean }): Promise<void> {
    await sleep(this.delayMs);
    return super.clearOutboxes(published, opts);
  }
}

/** The real repository, whose saves of the tasks named in `slow` each start `slow.ms` late. */
class SlowSaves extends TaskRepository {
  constructor(
    conn: mongoose.Connection,
    readonly slow: { ids: Set<string>; ms: number },
  ) {
    super(conn);
  }

  override async save(task: Parameters<TaskRepository['save']>[0]): Promise<void> {
    if (this.slow.ids.has(task._id)) await sleep(this.slow.ms);
    return super.save(task);
  }
}

/** What the tests send and wait for, against one orchestrator (`get` is called at use). */
function driver(get: () => Orchestrator) {
  function create(
    accountId: string,
    prompt: string,
    extra: { concurrency_limit?: number; mode?: 'live' | 'test'; user_id?: string; task_id?: string; timeoutMs?: number } = {},
  ) {
    return get().client.request(
      'task.create',
      {
        task_id: extra.task_id ?? newId('task'),
        account_id: accountId,
        environment: 'test',
        prompt,
        user_id: extra.user_id ?? null,
        metadata: {},
        mode: extra.mode ?? 'live',
        created_at: new Date().toISOString(),
        concurrency_limit: extra.concurrency_limit ?? 10,
      },
      { partitionKey: accountId, timeoutMs: extra.timeoutMs ?? 5000 },
    ) as Promise<TaskReply & { task: { id: string; status: string; tool: string } }>;
  }

  const stepFor = (taskId: string, index = 0) =>
    waitFor(() => get().steps.find((s) => s.task_id === taskId && s.step_index === index), { what: `step.run ${index} of ${taskId}` });
  const eventsOf = (taskId: string) => get().events.filter((e) => e.task.id === taskId);

  /** A step.result for `step`, as the executor would send it. */
  function sendResult(step: StepRun, result: Omit<StepResult, 'task_id' | 'account_id' | 'environment' | 'step_index'>) {
    return get().client.publish(
      'step.result',
      { task_id: step.task_id, account_id: step.account_id, environment: step.environment, step_index: step.step_index, ...result },
      { partitionKey: step.account_id },
    );
  }

  const complete = (step: StepRun, output: Record<string, unknown> = { text: 'done' }) =>
    sendResult(step, { outcome: 'complete', output, duration_ms: 3 });

  const needsAuth = (step: StepRun, service: string) =>
    sendResult(step, {
      outcome: 'needs_authorization',
      authorization: {
        reason: 'oauth_consent_required',
        service,
        auth_url: `http://127.0.0.1:1/oauth/start/${step.task_id}`,
        message: `Connect ${service}`,
      },
      duration_ms: 1,
    });

  /** The task once `pred` holds for it. */
  const taskWhen = (id: string, pred: (t: NonNullable<Awaited<ReturnType<TaskRepository['get']>>>) => boolean, what = `task ${id}`) =>
    waitFor(
      async () => {
        const t = await get().tasks.get(id);
        return t && pred(t) ? t : undefined;
      },
      { what },
    );

  return { create, stepFor, eventsOf, complete, needsAuth, taskWhen };
}

describe('task writer (real broker and database)', () => {
  const { logger } = memoryLogger('orchestrator');
  let orch: Orchestrator;
  let mongo: mongoose.Connection;
  let client: Broker;
  let tasks: TaskRepository;
  let steps: StepRun[];

  beforeAll(async () => {
    orch = await startOrchestrator(logger);
    ({ mongo, client, tasks, steps } = orch);
  });

  afterAll(async () => {
    await orch?.stop();
  });

  const { create, stepFor, eventsOf, complete, needsAuth, taskWhen } = driver(() => orch);

  it('creates a running task, dispatches its step, and completes it with the step output', async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Echo "hi there"');
    expect(reply.ok).toBe(true);
    expect(reply.task).toMatchObject({ status: 'running', tool: 'text' });
    const step = await stepFor(reply.task.id);
    expect(step).toMatchObject({ tool: 'text', action: 'echo', input: { text: 'hi there' }, idempotency_key: `${reply.task.id}:0` });
    await complete(step, { text: 'hi there' });
    const done = await waitFor(async () => {
      const t = await tasks.get(reply.task.id);
      return t?.status === 'complete' ? t : undefined;
    });
    expect(done.result).toEqual({ text: 'hi there' });
    // The outbox is cleared once the broker confirmed its messages.
    await waitFor(async () => (await tasks.get(reply.task.id))?.outbox.length === 0, { what: 'outbox cleared' });
    await waitFor(() => eventsOf(reply.task.id).some((e) => e.kind === 'completed'));
    expect(eventsOf(reply.task.id).map((e) => e.version)).toEqual([1, 2]);
  });

  it('answers a redelivered create with the same task and creates nothing new', async () => {
    const acct = uniqueName('acct');
    const taskId = newId('task');
    const cmd = {
      task_id: taskId,
      account_id: acct,
      environment: 'test' as const,
      prompt: 'Echo "x"',
      user_id: null,
      metadata: {},
      mode: 'live' as const,
      created_at: new Date().toISOString(),
      concurrency_limit: 10,
    };
    const a = (await client.request('task.create', cmd, { partitionKey: acct, timeoutMs: 5000 })) as TaskReply & { task: unknown };
    const b = (await client.request('task.create', cmd, { partitionKey: acct, timeoutMs: 5000 })) as TaskReply & { task: unknown };
    expect(b.task).toEqual(a.task);
    expect(await mongo.collection('tasks').countDocuments({ account_id: acct })).toBe(1);
  });

  it('rejects a prompt no tool matches with no_matching_tool and a suggestion', async () => {
    const reply = await create(uniqueName('acct'), 'zzz qqq');
    expect(reply).toMatchObject({
      ok: false,
      error: { code: 'no_matching_tool', message: expect.any(String), suggestion: expect.any(String) },
    });
  });

  it('previews in test mode without dispatching any step', async () => {
    const reply = await create(uniqueName('acct'), 'uppercase "abc"', { mode: 'test' });
    const done = await waitFor(async () => {
      const t = await tasks.get(reply.task.id);
      return t?.status === 'complete' ? t : undefined;
    });
    expect(done.result).toEqual({
      preview: {
        tool: 'text',
        steps: [{ tool: 'text', action: 'uppercase', input: { text: 'abc' }, side_effect: 'read', missing: [] }],
        derived: [],
      },
    });
    expect(steps.some((s) => s.task_id === reply.task.id)).toBe(false);
  });

  it('refuses, before anything is stored, a request whose required inputs are not in the prompt, naming them with a suggestion', async () => {
    const acct = uniqueName('acct');
    for (const mode of ['live', 'test'] as const) {
      const reply = await create(acct, 'Create an issue titled "Login fails"', { mode, user_id: 'u1' });
      expect(reply).toMatchObject({
        ok: false,
        error: {
          code: 'missing_input',
          message: expect.any(String),
          suggestion: expect.any(String),
          missing: expect.arrayContaining([expect.stringContaining('repo')]),
        },
      });
    }
    expect(await mongo.collection('tasks').countDocuments({ account_id: acct })).toBe(0);
  });

  it('records the plan and its planner at create, pending tasks included, and runs a pending task on its recorded plan when admitted', async () => {
    const acct = uniqueName('acct');
    const first = await create(acct, 'Echo "1"', { concurrency_limit: 1 });
    const second = await create(acct, 'Echo "2"', { concurrency_limit: 1 });
    expect([first.task.status, second.task.status]).toEqual(['running', 'pending']);
    const pending = await tasks.get(second.task.id);
    expect(pending).toMatchObject({
      status: 'pending',
      planner: { name: 'rules' },
      workflow: [{ tool: 'text', action: 'echo', input: { text: '2' } }],
    });
    // Were it planned again when admitted, the step would say "2".
    await mongo.collection('tasks').updateOne({ _id: second.task.id } as never, { $set: { 'workflow.0.input.text': 'as recorded' } });
    await complete(await stepFor(first.task.id));
    expect((await stepFor(second.task.id)).input).toEqual({ text: 'as recorded' });
    await waitFor(() => eventsOf(second.task.id).some((e) => e.kind === 'started'));
    expect(eventsOf(second.task.id).every((e) => e.task.planner?.name === 'rules')).toBe(true);
  });

  it('holds tasks over the concurrency limit as pending and starts them FIFO', async () => {
    const acct = uniqueName('acct');
    const first = await create(acct, 'Echo "1"', { concurrency_limit: 1 });
    const second = await create(acct, 'Echo "2"', { concurrency_limit: 1 });
    const third = await create(acct, 'Echo "3"', { concurrency_limit: 1 });
    expect([first.task.status, second.task.status, third.task.status]).toEqual(['running', 'pending', 'pending']);
    await complete(await stepFor(first.task.id));
    await stepFor(second.task.id);
    expect(steps.some((s) => s.task_id === third.task.id)).toBe(false);
    expect((await tasks.get(third.task.id))?.status).toBe('pending');
    await complete(await stepFor(second.task.id));
    await stepFor(third.task.id);
  });

  it('answers task.inspect with the prompt, the plan as sent and where the task stands; task_not_found outside its account environment', async () => {
    const acct = uniqueName('acct');
    const inspect = (id: string, environment: 'test' | 'live' = 'test') =>
      client.request('task.inspect', { task_id: id, account_id: acct, environment }, { partitionKey: acct, timeoutMs: 5000 });
    const first = await create(acct, 'Echo "first"', { concurrency_limit: 1, user_id: 'u_ins' });
    const second = await create(acct, 'Echo "second"', { concurrency_limit: 1 });
    const step = await stepFor(first.task.id);

    const running = await inspect(first.task.id);
    if (!running.ok) throw new Error(running.error.message);
    expect(running.task).toMatchObject({
      prompt: 'Echo "first"',
      mode: 'live',
      status: 'running',
      current_step: 0,
      waiting_on: null,
      concurrency_limit: 1,
      steps: [{ tool: 'text', action: 'echo', input: step.input }],
    });
    expect(Date.parse(running.task.step_dispatched_at ?? '')).toBeGreaterThan(Date.now() - 60_000);
    expect(running.task.step_timeout_ms).toBeGreaterThan(0);
    const pending = await inspect(second.task.id);
    expect(pending).toMatchObject({
      ok: true,
      task: { status: 'pending', steps: [{ tool: 'text', action: 'echo', input: { text: 'second' } }] },
    });

    // Asked right after the result that makes it wait: the partition's order shows the change.
    await needsAuth(step, 'github');
    expect(await inspect(first.task.id)).toMatchObject({ ok: true, task: { status: 'waiting', waiting_on: 'github', current_step: 0 } });
    expect(await inspect(first.task.id, 'live')).toMatchObject({ ok: false, error: { code: 'task_not_found' } });
    expect(await inspect('task_nope')).toMatchObject({ ok: false, error: { code: 'task_not_found' } });
  });

  it('decides cancel against a finishing last step in one place: never both', async () => {
    const acct = uniqueName('acct');
    const outcomes: string[] = [];
    for (let i = 0; i < 50; i++) {
      const reply = await create(acct, `Echo "race ${i}"`);
      const step = await stepFor(reply.task.id);
      const [cancel] = await Promise.all([
        client.request(
          'task.cancel',
          { task_id: reply.task.id, account_id: acct, environment: 'test' },
          { partitionKey: acct, timeoutMs: 5000 },
        ),
        complete(step),
      ]);
      const final = await waitFor(async () => {
        const t = await tasks.get(reply.task.id);
        return t && (t.status === 'complete' || t.status === 'cancelled') ? t : undefined;
      });
      await new Promise((r) => setTimeout(r, 20));
      const settled = await tasks.get(reply.task.id);
      expect(settled?.status).toBe(final.status);
      if (final.status === 'cancelled') expect(cancel.ok).toBe(true);
      else expect(cancel).toMatchObject({ ok: false, error: { code: 'task_already_complete' } });
      outcomes.push(final.status);
    }
    expect(outcomes).toHaveLength(50);
  }, 120_000);

  it('answers task_not_found for another environment and task_already_complete after the end', async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Echo "y"');
    const other = await client.request(
      'task.cancel',
      { task_id: reply.task.id, account_id: acct, environment: 'live' },
      { partitionKey: acct, timeoutMs: 5000 },
    );
    expect(other).toMatchObject({ ok: false, error: { code: 'task_not_found' } });
    const ok = await client.request(
      'task.cancel',
      { task_id: reply.task.id, account_id: acct, environment: 'test' },
      { partitionKey: acct, timeoutMs: 5000 },
    );
    expect(ok).toMatchObject({ ok: true, task: { id: reply.task.id, status: 'cancelled' } });
    const again = await client.request(
      'task.cancel',
      { task_id: reply.task.id, account_id: acct, environment: 'test' },
      { partitionKey: acct, timeoutMs: 5000 },
    );
    expect(again).toMatchObject({ ok: false, error: { code: 'task_already_complete' } });
  });

  it('pauses on needs_authorization and resumes the same step when the user connects', async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Echo "needs auth"', { user_id: 'u1' });
    const step = await stepFor(reply.task.id);
    await needsAuth(step, 'github');
    await waitFor(async () => (await tasks.get(reply.task.id))?.status === 'waiting');
    const waitingEvent = await waitFor(() => eventsOf(reply.task.id).find((e) => e.kind === 'waiting'));
    expect(waitingEvent.waiting).toMatchObject({ reason: 'oauth_consent_required', service: 'github' });

    const before = steps.filter((s) => s.task_id === reply.task.id).length;
    await client.publish(
      'connection.changed',
      { account_id: acct, environment: 'test', user_id: 'u1', service: 'github', outcome: 'authorized', scopes: ['repo'] },
      { partitionKey: acct },
    );
    await waitFor(() => steps.filter((s) => s.task_id === reply.task.id).length === before + 1, { what: 'step re-dispatched' });
    const resumed = await tasks.get(reply.task.id);
    expect(resumed?.status).toBe('running');
    expect(steps.filter((s) => s.task_id === reply.task.id).every((s) => s.idempotency_key === `${reply.task.id}:0`)).toBe(true);
  });

  it('resumes a task from the step that needed consent: step 1 of 2 is sent again, step 0 is not', async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Uppercase the text "make it loud" then post it to #random', { user_id: 'u_seq' });
    const id = reply.task.id;
    const first = await stepFor(id, 0);
    expect(first).toMatchObject({ tool: 'text', action: 'uppercase', step_count: 2, idempotency_key: `${id}:0` });
    await complete(first, { text: 'MAKE IT LOUD' });
    const second = await stepFor(id, 1);
    expect(second).toMatchObject({ tool: 'slack', action: 'post_message', idempotency_key: `${id}:1` });
    await needsAuth(second, 'slack');
    const waiting = await taskWhen(id, (t) => t.status === 'waiting', 'waiting');
    expect(waiting).toMatchObject({ current_step: 1, waiting_on: { service: 'slack' } });

    await client.publish(
      'connection.changed',
      { account_id: acct, environment: 'test', user_id: 'u_seq', service: 'slack', outcome: 'authorized', scopes: ['chat:write'] },
      { partitionKey: acct },
    );
    const again = await waitFor(() => steps.filter((s) => s.task_id === id && s.step_index === 1)[1], { what: 'step 1 re-dispatched' });
    expect(again).toMatchObject({ tool: 'slack', action: 'post_message', input: second.input, idempotency_key: `${id}:1` });
    expect(await tasks.get(id)).toMatchObject({ status: 'running', current_step: 1, outputs: [{ text: 'MAKE IT LOUD' }] });

    await complete(again, { ok: true, ts: '1.0' });
    const done = await taskWhen(id, (t) => t.status === 'complete', 'complete');
    expect(done.result).toEqual({ ok: true, ts: '1.0', steps: [{ text: 'MAKE IT LOUD' }, { ok: true, ts: '1.0' }] });
    await waitFor(() => eventsOf(id).some((e) => e.kind === 'completed'), { what: 'completed event' });
    expect(eventsOf(id).map((e) => e.kind)).toEqual(['created', 'progress', 'waiting', 'resumed', 'completed']);
    // Step 0 went out once, before the pause, and never again.
    expect(steps.filter((s) => s.task_id === id).map((s) => s.step_index)).toEqual([0, 1, 1]);
  });

  it('resumes every task of the user waiting on the service when the user connects, and no other waiting task', async () => {
    const acct = uniqueName('acct');
    const otherAcct = uniqueName('acct');
    const status = async (id: string) => (await tasks.get(id))?.status;

    // Three tasks of u_many waiting on github, and three that must not move: another user of
    // the same account on github, the same user on slack, the same user id in another account.
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push((await create(acct, `Echo "mine ${i}"`, { user_id: 'u_many' })).task.id);
    const others = [
      { id: (await create(acct, 'Echo "other user"', { user_id: 'u_other' })).task.id, service: 'github' },
      { id: (await create(acct, 'Echo "other service"', { user_id: 'u_many' })).task.id, service: 'slack' },
      { id: (await create(otherAcct, 'Echo "other account"', { user_id: 'u_many' })).task.id, service: 'github' },
    ];
    for (const id of mine) await needsAuth(await stepFor(id), 'github');
    for (const o of others) await needsAuth(await stepFor(o.id), o.service);
    for (const id of [...mine, ...others.map((o) => o.id)])
      await waitFor(async () => (await status(id)) === 'waiting', { what: `${id} waiting` });
    const dispatched = (id: string) => steps.filter((s) => s.task_id === id).length;
    expect([...mine, ...others.map((o) => o.id)].map(dispatched)).toEqual([1, 1, 1, 1, 1, 1]);

    await client.publish(
      'connection.changed',
      { account_id: acct, environment: 'test', user_id: 'u_many', service: 'github', outcome: 'authorized', scopes: ['repo'] },
      { partitionKey: acct },
    );
    // Every one of the three is dispatched again, the same step with the same idempotency key, and completes.
    for (const id of mine) {
      await waitFor(() => dispatched(id) === 2, { what: `step of ${id} re-dispatched` });
      const again = steps.filter((s) => s.task_id === id);
      expect(again.map((s) => s.idempotency_key)).toEqual([`${id}:0`, `${id}:0`]);
      await complete(again[1]!, { text: id });
    }
    for (const id of mine) {
      const done = await waitFor(
        async () => {
          const t = await tasks.get(id);
          return t?.status === 'complete' ? t : undefined;
        },
        { what: `${id} complete` },
      );
      expect(done.result).toEqual({ text: id });
      await waitFor(() => eventsOf(id).some((e) => e.kind === 'completed'), { what: `completed event of ${id}` });
      expect(eventsOf(id).map((e) => e.kind)).toEqual(['created', 'waiting', 'resumed', 'completed']);
    }

    // The others are still waiting, with no new dispatch. The partition of `acct` handled the
    // event before the completions above; for the other account, a later event of its own
    // partition is the barrier.
    await client.publish(
      'connection.changed',
      { account_id: otherAcct, environment: 'test', user_id: 'u_nobody', service: 'github', outcome: 'authorized', scopes: ['repo'] },
      { partitionKey: otherAcct },
    );
    const barrier = await create(otherAcct, 'Echo "barrier"');
    await stepFor(barrier.task.id);
    for (const o of others) {
      expect({ id: o.id, status: await status(o.id), dispatched: dispatched(o.id) }).toEqual({
        id: o.id,
        status: 'waiting',
        dispatched: 1,
      });
      expect(eventsOf(o.id).map((e) => e.kind)).toEqual(['created', 'waiting']);
    }

    // And each of them resumes on its own user's connection (they were waiting, not lost).
    await client.publish(
      'connection.changed',
      { account_id: acct, environment: 'test', user_id: 'u_other', service: 'github', outcome: 'authorized', scopes: ['repo'] },
      { partitionKey: acct },
    );
    await waitFor(() => dispatched(others[0]!.id) === 2, { what: 'u_other’s task re-dispatched' });
    expect(await status(others[1]!.id)).toBe('waiting');
  });

  it('fails waiting tasks with permission_denied when the user denies consent', async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Echo "denied"', { user_id: 'u2' });
    const step = await stepFor(reply.task.id);
    await needsAuth(step, 'slack');
    await waitFor(async () => (await tasks.get(reply.task.id))?.status === 'waiting');
    await client.publish(
      'connection.changed',
      { account_id: acct, environment: 'test', user_id: 'u2', service: 'slack', outcome: 'denied' },
      { partitionKey: acct },
    );
    const failed = await waitFor(async () => {
      const t = await tasks.get(reply.task.id);
      return t?.status === 'failed' ? t : undefined;
    });
    expect(failed.error).toMatchObject({ code: 'permission_denied', recoverable: true, suggestion: expect.any(String) });
  });

  describe('custom tools', () => {
    const crm = (description = 'Contacts in the Acme CRM') => ({
      name: 'acme_crm',
      description,
      base_url: 'https://crm.example.com/api',
      created_at: new Date().toISOString(),
      oauth: {
        authorize_url: 'https://crm.example.com/authorize',
        token_url: 'https://crm.example.com/token',
        client_id: 'cid',
        scopes: ['contacts'],
      },
      actions: [
        {
          name: 'list_contacts',
          description: 'List contacts',
          method: 'GET' as const,
          path: '/contacts',
          input_schema: { type: 'object', properties: { limit: { type: 'integer' } } },
        },
      ],
    });
    const toolRequest = (type: 'tool.register' | 'tool.list' | 'tool.delete', acct: string, extra: object, environment = 'test') =>
      client.request(type, { account_id: acct, environment, ...extra } as never, { partitionKey: acct, timeoutMs: 5000 }) as Promise<{
        ok: boolean;
        created?: boolean;
        tools?: { name: string; description: string }[];
        error?: { code: string };
      }>;

    it('registers, replaces, lists and deletes a tool of one account environment', async () => {
      const acct = uniqueName('acct');
      expect(await toolRequest('tool.register', acct, { tool: crm() })).toMatchObject({ ok: true, created: true });
      expect(await toolRequest('tool.register', acct, { tool: crm('v2') })).toMatchObject({ ok: true, created: false });
      expect((await toolRequest('tool.list', acct, {})).tools?.map((t) => [t.name, t.description])).toEqual([['acme_crm', 'v2']]);
      expect((await toolRequest('tool.list', acct, {}, 'live')).tools).toEqual([]);
      expect((await toolRequest('tool.list', uniqueName('other'), {})).tools).toEqual([]);
      expect(await toolRequest('tool.delete', acct, { name: 'acme_crm' })).toEqual({ ok: true });
      expect(await toolRequest('tool.delete', acct, { name: 'acme_crm' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
      expect(await toolRequest('tool.register', acct, { tool: { ...crm(), name: 'github' } })).toMatchObject({
        ok: false,
        error: { code: 'invalid_request' },
      });
    });

    it('plans a task with the tool and sends its action definition with the step; deleted, it matches nothing', async () => {
      const acct = uniqueName('acct');
      await toolRequest('tool.register', acct, { tool: crm() });
      const prompt = 'List 3 contacts from the acme crm';
      expect(await create(acct, prompt)).toMatchObject({
        ok: false,
        error: { code: 'invalid_request', message: expect.stringContaining('user_id') },
      });
      const reply = await create(acct, prompt, { user_id: 'u1' });
      expect(reply.task).toMatchObject({ status: 'running', tool: 'acme_crm' });
      const step = await stepFor(reply.task.id);
      expect(step).toMatchObject({
        tool: 'acme_crm',
        action: 'list_contacts',
        input: { limit: 3 },
        custom: { base_url: 'https://crm.example.com/api', method: 'GET', path: '/contacts', service: 'acme_crm', scopes: ['contacts'] },
      });

      const preview = await create(acct, prompt, { user_id: 'u1', mode: 'test' });
      const previewed = await waitFor(async () => {
        const t = await tasks.get(preview.task.id);
        return t?.status === 'complete' ? t : undefined;
      });
      expect(previewed.result).toEqual({
        preview: {
          tool: 'acme_crm',
          steps: [{ tool: 'acme_crm', action: 'list_contacts', input: { limit: 3 }, side_effect: 'read', missing: [] }],
          derived: [],
        },
      });

      await toolRequest('tool.delete', acct, { name: 'acme_crm' });
      expect(await create(acct, prompt, { user_id: 'u1' })).toMatchObject({ ok: false, error: { code: 'no_matching_tool' } });
    });

    it('fails the tasks waiting for consent to a tool when the tool is deleted', async () => {
      const acct = uniqueName('acct');
      await toolRequest('tool.register', acct, { tool: crm() });
      const reply = await create(acct, 'List 3 contacts from the acme crm', { user_id: 'u1' });
      const step = await stepFor(reply.task.id);
      await needsAuth(step, 'acme_crm');
      await waitFor(async () => (await tasks.get(reply.task.id))?.status === 'waiting', { what: 'waiting' });
      expect(await toolRequest('tool.delete', acct, { name: 'acme_crm' })).toEqual({ ok: true });
      const failed = await waitFor(async () => {
        const t = await tasks.get(reply.task.id);
        return t?.status === 'failed' ? t : undefined;
      });
      expect(failed.error).toMatchObject({
        code: 'step_failed',
        recoverable: false,
        message: expect.stringContaining('acme_crm was deleted'),
      });
    });
  });
});

/**
 * The stall give-up, with the real reaper on compressed timings: a step without a result is
 * re-dispatched after 400 ms (STALL_AFTER_MS), and given up 2 s (STALL_GIVE_UP_AFTER_MS) after it
 * was first sent.
 */
describe('the LLM planner, outside the partitions (real broker and database, a scripted model)', () => {
  const { logger } = memoryLogger('orchestrator');
  let orch: Orchestrator;
  let model: ModelServer;
  const SLOW_MS = 2400; // under the model timeout (3000 ms); the fast answer has SLOW_MS / 3 = 800 ms on a loaded machine
  const posted = (text: string) => ({ calls: [{ name: 'slack__post_message', args: { channel: 'eng', text } }] });

  beforeAll(async () => {
    model = await startModelServer((prompt) => {
      if (prompt.startsWith('slow')) return { ...posted('slow'), delayMs: SLOW_MS };
      if (prompt.startsWith('too slow')) return { ...posted('never'), delayMs: 5000 };
      if (prompt.startsWith('vague'))
        return { calls: [{ name: 'refuse', args: { reason: 'Post what, where?', suggestion: 'Say the text and the channel' } }] };
      return posted(prompt);
    });
    orch = await startOrchestrator(logger, { llm: { baseUrl: model.baseUrl, apiKey: model.apiKey, model: 'scripted-1', timeoutMs: 3000 } });
  });

  afterAll(async () => {
    await orch?.stop();
    await model?.close();
  });

  const { create, stepFor } = driver(() => orch);
  /** Another account whose creates go to the same partition as `account`'s. */
  const samePartitionAs = (account: string) => {
    for (;;) {
      const other = uniqueName('acct');
      if (partitionOf(other) === partitionOf(account)) return other;
    }
  };

  it("answers another account of the same partition at once while one account's create waits for the model, then records the model's plan", async () => {
    const a = uniqueName('acct');
    const b = samePartitionAs(a);
    const t0 = Date.now();
    const slow = create(a, 'slow: post to #eng', { user_id: 'u1' });
    await waitFor(() => model.requests.some((r) => r.prompt.startsWith('slow')), { what: "the model called for a's task" });
    const t1 = Date.now();
    const fast = await create(b, 'fast: post to #eng', { user_id: 'u1' });
    const fastMs = Date.now() - t1;
    expect(fast.task).toMatchObject({ status: 'running', tool: 'slack' });
    expect(fastMs).toBeLessThan(SLOW_MS / 3);
    expect(await Promise.race([slow.then(() => 'answered'), Promise.resolve('still waiting')])).toBe('still waiting');
    const reply = await slow;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(SLOW_MS);
    expect(reply.task).toMatchObject({ status: 'running', tool: 'slack', planner: { name: 'llm', model: 'scripted-1' } });
    expect(await orch.tasks.get(reply.task.id)).toMatchObject({
      planner: { name: 'llm', model: 'scripted-1' },
      workflow: [{ tool: 'slack', action: 'post_message', input: { channel: 'eng', text: 'slow' } }],
    });
    expect((await stepFor(reply.task.id)).input).toEqual({ channel: 'eng', text: 'slow' });
  });

  it("answers the model's refusal as unsupported_request with its suggestion, storing nothing", async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'vague: tell them');
    expect(reply).toEqual({
      ok: false,
      error: { code: 'unsupported_request', message: 'Post what, where?', suggestion: 'Say the text and the channel' },
    });
    expect(await orch.mongo.collection('tasks').countDocuments({ account_id: acct })).toBe(0);
  });

  it('falls back to the rules planner when the model does not answer in time, and says why', async () => {
    const reply = await create(uniqueName('acct'), 'too slow: Echo "fallback"', { timeoutMs: 8000 });
    const stored = await orch.tasks.get(reply.task.id);
    expect(stored?.planner).toEqual({ name: 'rules', fallback_reason: 'the model did not answer within 3000 ms' });
    expect(stored?.workflow).toEqual([{ tool: 'text', action: 'echo', input: { text: 'fallback' } }]);
  });

  it("gives the model only what is left of the requester's wait: a create waiting 2.5 s falls back in time", async () => {
    const reply = await create(uniqueName('acct'), 'too slow: Echo "in time"', { timeoutMs: 2500 });
    expect(reply.ok).toBe(true);
    expect((await orch.tasks.get(reply.task.id))?.planner?.fallback_reason).toMatch(/^the model did not answer within 1\d{3} ms$/);
  });

  it('ignores a second plan for a task already inserted (a redelivery): the answer is the task as created', async () => {
    const acct = uniqueName('acct');
    const first = await create(acct, 'once: post to #eng', { user_id: 'u1' });
    const again = (await orch.client.request(
      'task.create',
      {
        task_id: first.task.id,
        account_id: acct,
        environment: 'test',
        prompt: 'once: post to #eng',
        user_id: 'u1',
        metadata: {},
        mode: 'live',
        created_at: new Date().toISOString(),
        concurrency_limit: 10,
        plan: { tool: 'text', steps: [{ tool: 'text', action: 'echo', input: { text: 'other' } }], planner: { name: 'llm', model: 'x' } },
      },
      { partitionKey: acct, timeoutMs: 5000 },
    )) as TaskReply & { task: unknown };
    expect(again.task).toMatchObject({ id: first.task.id, tool: 'slack' });
    expect((await orch.tasks.get(first.task.id))?.workflow).toEqual([
      { tool: 'slack', action: 'post_message', input: { channel: 'eng', text: 'once: post to #eng' } },
    ]);
    expect(await orch.mongo.collection('tasks').countDocuments({ account_id: acct })).toBe(1);
  });
});

describe('stalled steps (real reaper, broker and database)', () => {
  const GIVE_UP_MS = 2000;
  const { logger, lines } = memoryLogger('orchestrator');
  let orch: Orchestrator;

  beforeAll(async () => {
    orch = await startOrchestrator(logger, { stallGiveUpAfterMs: GIVE_UP_MS, reaper: { stallAfterMs: 400, intervalMs: 100 } });
  });

  afterAll(async () => {
    await orch?.stop();
  });

  const { create, stepFor, eventsOf, complete, taskWhen } = driver(() => orch);
  const dispatches = (id: string, index = 0) => orch.steps.filter((s) => s.task_id === id && s.step_index === index);

  it('fails a running task whose step result never arrives with service_unavailable after the deadline, and frees its slot', async () => {
    const acct = uniqueName('acct');
    const stalled = await create(acct, 'Echo "nobody answers"', { concurrency_limit: 1 });
    const queued = await create(acct, 'Echo "next"', { concurrency_limit: 1 });
    expect([stalled.task.status, queued.task.status]).toEqual(['running', 'pending']);
    const id = stalled.task.id;
    const first = await stepFor(id);

    const failed = await taskWhen(id, (t) => t.status === 'failed', 'stalled task failed');
    expect(failed.error).toEqual({
      code: 'service_unavailable',
      message: expect.stringMatching(/^Step 1\/1 \(text\.echo\) got no result in \d+(\.\d)? s/),
      tool: 'text',
      recoverable: true,
      suggestion: expect.any(String),
    });
    // Not before the deadline, and only after the reaper's re-dispatches (same step, same key) got nothing.
    expect(Date.parse(failed.failed_at ?? '') - Date.parse(failed.created_at)).toBeGreaterThanOrEqual(GIVE_UP_MS);
    expect(dispatches(id).length).toBeGreaterThanOrEqual(3);
    expect(dispatches(id).every((s) => s.idempotency_key === `${id}:0`)).toBe(true);
    expect(lines().some((l) => l.includes('stalled step given up') && l.includes(id))).toBe(true);
    // Announced through the outbox like any failure.
    const event = await waitFor(() => eventsOf(id).find((e) => e.kind === 'failed'), { what: 'task.failed' });
    expect(event.task).toMatchObject({ status: 'failed', error: failed.error });

    // The slot is free: the pending task starts. A late result of the given-up step changes nothing.
    const next = await stepFor(queued.task.id);
    const sent = dispatches(id).length;
    await complete(first);
    await complete(next);
    await taskWhen(queued.task.id, (t) => t.status === 'complete', 'the admitted task complete');
    await sleep(500); // several reaper sweeps
    expect(await orch.tasks.get(id)).toMatchObject({ status: 'failed', error: failed.error });
    expect(dispatches(id)).toHaveLength(sent);
    expect(eventsOf(id).map((e) => e.kind)).toEqual(['created', 'failed']);
  });

  it('leaves alone a task whose results arrive in time, though re-dispatched and longer in all than the deadline', async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Echo "hi" 4 times');
    const id = reply.task.id;
    const started = Date.now();
    for (let i = 0; i < 4; i++) {
      const step = await stepFor(id, i);
      const sentAt = Date.now();
      // Late enough for the reaper to re-dispatch it, well within the deadline: the clock is per step.
      await waitFor(() => dispatches(id, i).length >= 2, { what: `step ${i} re-dispatched` });
      await sleep(Math.max(0, 600 - (Date.now() - sentAt)));
      await complete(step, { text: `hi ${i}` });
    }
    const done = await taskWhen(id, (t) => t.status === 'complete', 'complete');
    expect(Date.now() - started).toBeGreaterThan(GIVE_UP_MS);
    expect(done.error).toBeUndefined();
    expect(done.result).toMatchObject({ text: 'hi 3' });
    await waitFor(() => eventsOf(id).some((e) => e.kind === 'completed'), { what: 'completed event' });
    expect(eventsOf(id).map((e) => e.kind)).toEqual(['created', 'progress', 'progress', 'progress', 'completed']);
  });
});

/**
 * Clearing published outboxes must not hold the partition: under load a batch of clears took up
 * to 0.6 s on FerretDB, and every message of the partition's accounts waited behind it.
 */
describe('clearing published outboxes (real broker and database)', () => {
  const SLOW_MS = 1500;
  const { logger } = memoryLogger('orchestrator');
  let orch: Orchestrator;

  beforeAll(async () => {
    orch = await startOrchestrator(logger, { outboxClearDelayMs: 50, slowClearMs: SLOW_MS });
  });

  afterAll(async () => {
    await orch?.stop();
  });

  const { create, stepFor, complete, needsAuth, taskWhen } = driver(() => orch);

  it("clears ended tasks' outboxes beside the partition's messages, not in front of them", async () => {
    const acct = uniqueName('acct');
    const first = await create(acct, 'Echo "one"');
    await complete(await stepFor(first.task.id));
    await taskWhen(first.task.id, (t) => t.status === 'complete' && t.outbox.length > 0, 'complete, its outbox still stored');
    // The clear of that outbox is now under way (50 ms batching, then 1.5 s of slow database).
    await sleep(200);
    const asked = Date.now();
    const second = await create(acct, 'Echo "two"');
    expect(second.ok).toBe(true);
    expect(Date.now() - asked).toBeLessThan(SLOW_MS / 2);
    await taskWhen(first.task.id, (t) => t.outbox.length === 0 && t.has_outbox === false, 'outbox cleared');
  }, 20_000);

  it("clears an unfinished task's outbox too, under the partition's turn", async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Send an email to bob@example.com saying "hi" with subject "x"', { user_id: 'user_1' });
    await needsAuth(await stepFor(reply.task.id), 'gmail');
    await taskWhen(reply.task.id, (t) => t.status === 'waiting', 'waiting');
    await taskWhen(reply.task.id, (t) => t.outbox.length === 0 && t.has_outbox === false, 'outbox cleared');
  }, 20_000);

  describe('one account, several tasks', () => {
    const slow = { ids: new Set<string>(), ms: 1500 };
    let lanes: Orchestrator;
    beforeAll(async () => {
      lanes = await startOrchestrator(memoryLogger('orchestrator').logger, { slowSaves: slow });
    });
    afterAll(async () => {
      await lanes?.stop();
    });
    const d = driver(() => lanes);

    it("advances an account's tasks side by side: a step result whose write is slow holds up only its own task", async () => {
      const acct = uniqueName('acct');
      const a = await d.create(acct, 'Echo "a", then uppercase it');
      const b = await d.create(acct, 'Echo "b", then uppercase it');
      const [stepA, stepB] = [await d.stepFor(a.task.id), await d.stepFor(b.task.id)];
      slow.ids.add(a.task.id);
      const sent = Date.now();
      await d.complete(stepA, { text: 'a' });
      await d.complete(stepB, { text: 'b' });
      await d.stepFor(b.task.id, 1);
      const bAfter = Date.now() - sent;
      await d.stepFor(a.task.id, 1);
      const aAfter = Date.now() - sent;
      // One writer for the partition, one lane per task: b's next step does not wait for a's write.
      expect(bAfter).toBeLessThan(slow.ms / 2);
      expect(aAfter).toBeGreaterThanOrEqual(slow.ms);
      slow.ids.clear();
    }, 20_000);

    it("still admits one account's tasks one at a time against its limit while their results arrive together", async () => {
      const acct = uniqueName('acct');
      const created: Awaited<ReturnType<typeof d.create>>[] = [];
      for (let i = 0; i < 6; i++) created.push(await d.create(acct, `Echo "t${i}"`, { concurrency_limit: 2 }));
      expect(created.map((c) => c.task.status)).toEqual(['running', 'running', 'pending', 'pending', 'pending', 'pending']);
      // Complete whatever runs, all at once, until every task is done; never more than 2 running.
      let maxRunning = 0;
      for (let round = 0; round < 6; round++) {
        const all = await Promise.all(created.map((c) => lanes.tasks.get(c.task.id)));
        const running = all.filter((t) => t !== undefined && t !== null && t.status === 'running');
        maxRunning = Math.max(maxRunning, running.length);
        if (all.every((t) => t?.status === 'complete')) break;
        await Promise.all(running.map(async (t) => d.complete(await d.stepFor(t?._id ?? ''))));
        await sleep(300);
      }
      await waitFor(async () => {
        const all = await Promise.all(created.map((c) => lanes.tasks.get(c.task.id)));
        return all.every((t) => t?.status === 'complete');
      });
      expect(maxRunning).toBeLessThanOrEqual(2);
    }, 30_000);
  });
});
