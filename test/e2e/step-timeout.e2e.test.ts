import { randomBytes } from 'node:crypto';
import { startReceiver, startStack, waitFor, type Stack } from '@tes/testing';
import { Api, createAccount, stepRunsOf, webhooksOf, type Account } from '../support/e2e.js';
import { startStepGate, type StepGate } from '../support/step-gate.js';

/**
 * The per-step timeout end to end, with the five services as real processes: the
 * orchestrator gives every step STEP_TIMEOUT_MS (here 2 s) in its step.run, the executor
 * ends a tool call that outlives it. The tool call is an `http.fetch` of a local step gate
 * (test/support/step-gate.ts) that holds the request; the http tool's own request timeout is
 * set far longer, so only the step timeout can end the step.
 *
 * The spec (7.4) names no code for a timed-out step; the service's code is `step_timeout`,
 * recoverable (docs/engine.md 5.1 and 5.4).
 */
describe('per-step timeout', () => {
  const STEP_TIMEOUT_MS = 2000;
  let stack: Stack;
  let gate: StepGate;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let account: Account;
  let api: Api;

  beforeAll(async () => {
    gate = await startStepGate();
    receiver = await startReceiver();
    stack = await startStack({
      env: {
        'task-orchestrator': { STEP_TIMEOUT_MS: String(STEP_TIMEOUT_MS) },
        executor: { HTTP_TOOL_ALLOW_HOSTS: '127.0.0.1', HTTP_TOOL_TIMEOUT_MS: '60000' },
        'webhook-dispatcher': { WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200' },
      },
    });
    account = await createAccount(stack, 'step-timeout-e2e', { url: receiver.url, envs: ['test'] });
    api = new Api(stack.baseUrl, account.api_keys.test);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await gate?.close();
    await receiver?.close();
  });

  const newTag = (p: string) => `${p}${randomBytes(4).toString('hex')}`;
  const hooks = (id: string) => webhooksOf(receiver.received, id, account.webhook_secrets.test);

  it('fails the task with step_timeout (recoverable) when a step’s tool call outlives the step timeout; later steps never run', async () => {
    const tag = newTag('hang');
    const created = await api.create({ prompt: gate.prompt(tag, 2) });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    // Step 0 reached the server, which never answers it.
    const hit = await gate.hit(tag, 0);

    const failed = await api.until(id, ['failed', 'complete', 'cancelled'], 30_000);
    const failedAt = Date.now();
    expect(failed).toMatchObject({
      id,
      status: 'failed',
      tool: 'http',
      error: {
        code: 'step_timeout',
        message: `http.fetch did not finish within ${STEP_TIMEOUT_MS} ms`,
        tool: 'http',
        recoverable: true,
        suggestion: expect.stringMatching(/^The web server took longer than \d+ s to answer; retry the task$/),
      },
    });
    expect(failed.failed_at).toMatch(/Z$/);
    expect(failed).not.toHaveProperty('result');
    // Ended by the step timeout, long before the http tool's own 60 s. (Not before it: the trace's
    // step duration below. The gate sees the request some time after the executor's clock for the
    // step started, 350 ms on a loaded machine once, so the time from the hit is no lower bound.)
    expect(failedAt - hit.at).toBeLessThan(STEP_TIMEOUT_MS + 10_000);
    // The executor gave the request up (closed the connection) rather than leaving it open.
    await waitFor(() => hit.aborted, { what: 'the held request to be aborted', timeoutMs: 5000 });

    // The trace shows the one step, failed, with the reason; step 1 was never dispatched.
    const trace = await api.trace(id);
    expect(trace.json).toMatchObject({
      task_id: id,
      steps: [{ tool: 'http', action: 'fetch', status: 'failed', note: `http.fetch did not finish within ${STEP_TIMEOUT_MS} ms` }],
    });
    expect(trace.json.steps).toHaveLength(1);
    expect(trace.json.steps[0].duration_ms).toBeGreaterThanOrEqual(STEP_TIMEOUT_MS);
    expect((await stepRunsOf(stack, id)).map((r) => r.step_index)).toEqual([0]);
    expect(gate.hitsOf(tag, 1)).toEqual([]);

    // task.failed carries the same error.
    const hook = await waitFor(() => hooks(id).find((h) => h.event === 'task.failed'), { what: 'task.failed webhook', timeoutMs: 20_000 });
    expect(hook.signatureOk).toBe(true);
    expect(hook.data.error).toMatchObject({ code: 'step_timeout', tool: 'http', recoverable: true });
    expect(hooks(id).some((h) => h.event === 'task.complete')).toBe(false);
  });

  it('times each step on its own: three steps of 0.8 s each complete although together they outlast the timeout', async () => {
    const tag = newTag('slow');
    gate.openAll(tag, 800);
    const created = await api.create({ prompt: gate.prompt(tag, 3) });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const done = await api.until(id, ['complete', 'failed', 'cancelled'], 30_000);
    expect(done).toMatchObject({ id, status: 'complete' });
    expect(done.result.steps).toHaveLength(3);
    const hits = gate.hitsOf(tag);
    expect(hits.map((h) => h.step)).toEqual([0, 1, 2]);
    // The workflow as a whole took longer than one step may.
    expect((hits[2]?.answeredAt ?? 0) - (hits[0]?.at ?? 0)).toBeGreaterThan(STEP_TIMEOUT_MS);
  });
});
