import { EXCHANGES, type TaskEvent } from '@tes/contracts';
import { createLogger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import { admin, AMQP_URL, request, startStack, waitFor, type Stack } from '@tes/testing';
import { PassThrough } from 'node:stream';

/**
 * The planning and execution engine end to end, with the five services as real
 * processes: a test-key prompt becomes a multi-step workflow that runs in the sandbox,
 * reports progress and leaves a trace; a "for each" over more than 50 items fails with
 * workflow_depth_exceeded before any step runs.
 */
describe('engine end to end', () => {
  let stack: Stack;
  let events: Broker;
  const seen: TaskEvent[] = [];
  let account: { account_id: string; api_keys: { test: string; live: string } };

  beforeAll(async () => {
    stack = await startStack();
    account = await admin(['accounts', 'create', '--name', 'engine-e2e'], stack.adminEnv);
    events = new Broker({
      url: AMQP_URL,
      source: 'engine-e2e',
      namespace: stack.namespace,
      logger: createLogger({ service: 'e2e', stream: new PassThrough(), level: 'error' }),
    });
    await events.connect();
    await events.consume({ name: 'e2e.engine-events', exchange: EXCHANGES.events, bindings: ['task.event.#'] }, async (d) => {
      seen.push(d.data as TaskEvent);
    });
  }, 120_000);

  afterAll(async () => {
    await events?.close(2000);
    await stack?.stopAll();
  });

  const auth = () => ({ authorization: `Bearer ${account.api_keys.test}` });
  const create = (body: object) => request('POST', `${stack.baseUrl}/tasks`, { headers: auth(), body });
  const settled = (id: string) =>
    waitFor(
      async () => {
        const r = await request('GET', `${stack.baseUrl}/tasks/${id}`, { headers: auth() });
        return r.json?.status === 'complete' || r.json?.status === 'failed' ? r.json : undefined;
      },
      { what: `task ${id} to end`, timeoutMs: 40_000 },
    );

  it('runs "create an issue … then list issues … then post them" in the sandbox, with progress and a trace of every step', async () => {
    const prompt = 'Create an issue titled "Engine e2e" in acme/api then list the open issues in acme/api then post them to #eng';
    const created = await create({ prompt, user_id: 'user_e2e' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'running', tool: 'github' });
    const id = created.json.id as string;

    const done = await settled(id);
    expect(done).toMatchObject({ id, status: 'complete', tool: 'github' });
    expect(done.result).toMatchObject({
      channel: expect.stringMatching(/^C/),
      text: expect.stringContaining('#1 Engine e2e'),
      steps: [
        { number: 1, title: 'Engine e2e', state: 'open' },
        { count: 1, items: [{ number: 1, title: 'Engine e2e' }] },
        { text: expect.stringContaining('#1 Engine e2e') },
      ],
    });

    const trace = await request('GET', `${stack.baseUrl}/tasks/${id}/trace`, { headers: auth() });
    expect(trace.status).toBe(200);
    expect(trace.json.steps).toEqual([
      { tool: 'github', action: 'create_issue', status: 'complete', duration_ms: expect.any(Number) },
      { tool: 'github', action: 'list_issues', status: 'complete', duration_ms: expect.any(Number) },
      { tool: 'slack', action: 'post_message', status: 'complete', duration_ms: expect.any(Number) },
    ]);
    expect(trace.json.total_duration_ms).toBeGreaterThanOrEqual(0);

    const progress = await waitFor(
      () => {
        const p = seen.filter((e) => e.task.id === id && e.kind === 'progress');
        return p.length === 2 ? p : undefined;
      },
      { what: 'two progress events' },
    );
    expect(progress.map((e) => e.progress)).toEqual([
      { step: '1/3', tool: 'github', message: 'github.create_issue done', progress_pct: 33 },
      { step: '2/3', tool: 'github', message: 'github.list_issues done', progress_pct: 67 },
    ]);

    // The sandbox keeps its state: a later task of the same user sees the issue, another user does not.
    const again = await settled((await create({ prompt: 'List the issues in acme/api', user_id: 'user_e2e' })).json.id);
    expect(again.result).toMatchObject({ count: 1, items: [{ title: 'Engine e2e' }] });
    const other = await settled((await create({ prompt: 'List the issues in acme/api', user_id: 'someone_else' })).json.id);
    expect(other.result).toEqual({ items: [], count: 0 });
  });

  it('fails a "for each" over 60 items with workflow_depth_exceeded before any step runs', async () => {
    const created = await create({ prompt: 'For each number from 1 to 60, echo it' });
    expect(created.status).toBe(201);
    expect(created.json.tool).toBe('text');
    const id = created.json.id as string;
    const failed = await settled(id);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'workflow_depth_exceeded', message: 'The workflow has 60 steps; the limit is 50', tool: 'text', recoverable: false },
    });
    const trace = await request('GET', `${stack.baseUrl}/tasks/${id}/trace`, { headers: auth() });
    expect(trace.status).toBe(200);
    expect(trace.json).toEqual({ task_id: id, steps: [], total_duration_ms: 0, planner: { name: 'rules' } });
    expect(seen.filter((e) => e.task.id === id && e.kind === 'progress')).toEqual([]);
  });

  it('previews a "for each" workflow in test mode with the side effect of each step', async () => {
    const created = await create({ prompt: 'Post "Standup in 5" to each of #eng and #ops', user_id: 'user_e2e', mode: 'test' });
    const done = await settled(created.json.id);
    expect(done.result).toEqual({
      preview: {
        tool: 'slack',
        steps: [
          { tool: 'slack', action: 'post_message', input: { channel: 'eng', text: 'Standup in 5' }, side_effect: 'write', missing: [] },
          { tool: 'slack', action: 'post_message', input: { channel: 'ops', text: 'Standup in 5' }, side_effect: 'write', missing: [] },
        ],
        derived: [],
      },
    });
  });

  it("previews the values it derived rather than read: a subject from the message, said in the user's words", async () => {
    const created = await create({ prompt: 'email lee@x.io that the deck is ready', user_id: 'user_e2e', mode: 'test' });
    const done = await settled(created.json.id);
    expect(done.result).toMatchObject({
      preview: {
        tool: 'gmail',
        steps: [
          { tool: 'gmail', action: 'send_email', input: { to: ['lee@x.io'], subject: 'The deck is ready', body: 'the deck is ready' } },
        ],
        derived: [expect.stringMatching(/^step 0 body: /), expect.stringMatching(/^step 0 subject: "The deck is ready"/)],
      },
    });
  });
});
