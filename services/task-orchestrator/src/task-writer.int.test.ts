import mongoose from 'mongoose';
import { EXCHANGES, newId, type StepRun, type TaskEvent, type TaskReply } from '@tes/contracts';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes } from '@tes/store';
import { AMQP_URL, MONGO_URL, memoryLogger, uniqueName, waitFor } from '@tes/testing';
import { TaskWriter } from './domain/task-writer.js';
import { outboxRelay } from './messaging/outbox-relay.js';
import { consumePartitions } from './messaging/partition.consumer.js';
import { TaskRepository } from './store/task.repository.js';
import { ToolAdmin } from './domain/tool-admin.js';
import { ToolRepository } from './store/tool.repository.js';

/**
 * The orchestrator's single writer, in-process, over the real broker and database:
 * a test "executor" records step.run commands and a test listener records task events.
 */
describe('task writer (real broker and database)', () => {
  const { logger } = memoryLogger('orchestrator');
  const namespace = uniqueName('orch');
  let mongo: mongoose.Connection;
  let broker: Broker;
  let client: Broker;
  let tasks: TaskRepository;
  const steps: StepRun[] = [];
  const events: TaskEvent[] = [];

  beforeAll(async () => {
    mongo = await connectMongo({ url: MONGO_URL, dbName: namespace, logger });
    tasks = new TaskRepository(mongo);
    const tools = new ToolRepository(mongo);
    await ensureIndexes(mongo);
    broker = new Broker({ url: AMQP_URL, source: 'orchestrator', logger, namespace });
    await broker.connect();
    const writer = new TaskWriter({ tasks, tools, logger, stepTimeoutMs: 5000, relay: outboxRelay(broker) });
    await consumePartitions(broker, writer, new ToolAdmin(tools, logger), 16);

    client = new Broker({ url: AMQP_URL, source: 'test', logger, namespace });
    await client.connect();
    await client.consume({ name: 'test.steps', exchange: EXCHANGES.commands, bindings: ['executor.steps'] }, async (d) => {
      steps.push(d.data as StepRun);
    });
    await client.consume({ name: 'test.events', exchange: EXCHANGES.events, bindings: ['task.event.#'] }, async (d) => {
      events.push(d.data as TaskEvent);
    });
  });

  afterAll(async () => {
    await client?.close();
    await broker?.close();
    await mongo?.dropDatabase();
    await mongo?.close();
  });

  function create(accountId: string, prompt: string, extra: { concurrency_limit?: number; mode?: 'live' | 'test'; user_id?: string } = {}) {
    return client.request(
      'task.create',
      {
        task_id: newId('task'),
        account_id: accountId,
        environment: 'test',
        prompt,
        user_id: extra.user_id ?? null,
        metadata: {},
        mode: extra.mode ?? 'live',
        created_at: new Date().toISOString(),
        concurrency_limit: extra.concurrency_limit ?? 10,
      },
      { partitionKey: accountId, timeoutMs: 5000 },
    ) as Promise<TaskReply & { task: { id: string; status: string; tool: string } }>;
  }

  const stepFor = (taskId: string, index = 0) =>
    waitFor(() => steps.find((s) => s.task_id === taskId && s.step_index === index), { what: `step.run of ${taskId}` });
  const eventsOf = (taskId: string) => events.filter((e) => e.task.id === taskId);

  function complete(step: StepRun, output: Record<string, unknown> = { text: 'done' }) {
    return client.publish(
      'step.result',
      {
        task_id: step.task_id,
        account_id: step.account_id,
        environment: step.environment,
        step_index: step.step_index,
        outcome: 'complete',
        output,
        duration_ms: 3,
      },
      { partitionKey: step.account_id },
    );
  }

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
    const a = (await client.request('task.create', cmd, { partitionKey: acct, timeoutMs: 5000 })) as TaskReply;
    const b = (await client.request('task.create', cmd, { partitionKey: acct, timeoutMs: 5000 })) as TaskReply;
    expect(b.task).toEqual(a.task);
    expect(await mongo.collection('tasks').countDocuments({ account_id: acct })).toBe(1);
  });

  it('rejects a prompt no tool matches with no_matching_tool', async () => {
    const reply = await create(uniqueName('acct'), 'zzz qqq');
    expect(reply).toMatchObject({ ok: false, error: { code: 'no_matching_tool' } });
  });

  it('previews in test mode without dispatching any step', async () => {
    const reply = await create(uniqueName('acct'), 'uppercase "abc"', { mode: 'test' });
    const done = await waitFor(async () => {
      const t = await tasks.get(reply.task.id);
      return t?.status === 'complete' ? t : undefined;
    });
    expect(done.result).toEqual({
      preview: { tool: 'text', steps: [{ tool: 'text', action: 'uppercase', input: { text: 'abc' }, side_effect: 'read' }] },
    });
    expect(steps.some((s) => s.task_id === reply.task.id)).toBe(false);
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
        ) as Promise<TaskReply>,
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
    const other = (await client.request(
      'task.cancel',
      { task_id: reply.task.id, account_id: acct, environment: 'live' },
      { partitionKey: acct, timeoutMs: 5000 },
    )) as TaskReply;
    expect(other).toMatchObject({ ok: false, error: { code: 'task_not_found' } });
    const ok = (await client.request(
      'task.cancel',
      { task_id: reply.task.id, account_id: acct, environment: 'test' },
      { partitionKey: acct, timeoutMs: 5000 },
    )) as TaskReply;
    expect(ok).toMatchObject({ ok: true, task: { id: reply.task.id, status: 'cancelled' } });
    const again = (await client.request(
      'task.cancel',
      { task_id: reply.task.id, account_id: acct, environment: 'test' },
      { partitionKey: acct, timeoutMs: 5000 },
    )) as TaskReply;
    expect(again).toMatchObject({ ok: false, error: { code: 'task_already_complete' } });
  });

  it('pauses on needs_authorization and resumes the same step when the user connects', async () => {
    const acct = uniqueName('acct');
    const reply = await create(acct, 'Echo "needs auth"', { user_id: 'u1' });
    const step = await stepFor(reply.task.id);
    await client.publish(
      'step.result',
      {
        task_id: step.task_id,
        account_id: acct,
        environment: 'test',
        step_index: 0,
        outcome: 'needs_authorization',
        authorization: {
          reason: 'oauth_consent_required',
          service: 'github',
          auth_url: 'http://127.0.0.1:1/oauth/start/x',
          message: 'Connect GitHub',
        },
        duration_ms: 1,
      },
      { partitionKey: acct },
    );
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

  it('resumes every task of the user waiting on the service when the user connects, and no other waiting task', async () => {
    const acct = uniqueName('acct');
    const otherAcct = uniqueName('acct');
    const needsAuth = (step: StepRun, service: string) =>
      client.publish(
        'step.result',
        {
          task_id: step.task_id,
          account_id: step.account_id,
          environment: step.environment,
          step_index: step.step_index,
          outcome: 'needs_authorization',
          authorization: {
            reason: 'oauth_consent_required',
            service,
            auth_url: `http://127.0.0.1:1/oauth/start/${step.task_id}`,
            message: `Connect ${service}`,
          },
          duration_ms: 1,
        },
        { partitionKey: step.account_id },
      );
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
    await client.publish(
      'step.result',
      {
        task_id: step.task_id,
        account_id: acct,
        environment: 'test',
        step_index: 0,
        outcome: 'needs_authorization',
        authorization: {
          reason: 'oauth_consent_required',
          service: 'slack',
          auth_url: 'http://127.0.0.1:1/oauth/start/y',
          message: 'Connect Slack',
        },
        duration_ms: 1,
      },
      { partitionKey: acct },
    );
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
        preview: { tool: 'acme_crm', steps: [{ tool: 'acme_crm', action: 'list_contacts', input: { limit: 3 }, side_effect: 'read' }] },
      });

      await toolRequest('tool.delete', acct, { name: 'acme_crm' });
      expect(await create(acct, prompt, { user_id: 'u1' })).toMatchObject({ ok: false, error: { code: 'no_matching_tool' } });
    });

    it('fails the tasks waiting for consent to a tool when the tool is deleted', async () => {
      const acct = uniqueName('acct');
      await toolRequest('tool.register', acct, { tool: crm() });
      const reply = await create(acct, 'List 3 contacts from the acme crm', { user_id: 'u1' });
      const step = await stepFor(reply.task.id);
      await client.publish(
        'step.result',
        {
          task_id: step.task_id,
          account_id: acct,
          environment: 'test',
          step_index: 0,
          outcome: 'needs_authorization',
          authorization: {
            reason: 'oauth_consent_required',
            service: 'acme_crm',
            auth_url: 'http://127.0.0.1:1/oauth/start/z',
            message: 'Connect',
          },
          duration_ms: 1,
        },
        { partitionKey: acct },
      );
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
