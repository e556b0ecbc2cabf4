import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { DEFAULT_PARTITIONS, QUEUES, type StepResult } from '@tes/contracts';
import { createLogger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import { AMQP_URL, startStack, waitFor, type Stack } from '@tes/testing';
import { Api, createAccount, killAndRestart, sleep, stepRunsOf, type Account } from '../support/e2e.js';
import { startStepGate, type StepGate } from '../support/step-gate.js';

/**
 * Crash safety (issue 4), with the five services as real processes: kill -9 of the executor,
 * then of the orchestrator, in the middle of a 4-step test-key workflow; after a restart the
 * task ends `complete`, and no step ran twice (the trace has each step exactly once; steps
 * that had finished before the crash were not run again).
 *
 * How "the middle" is hit: the workflow is four `http.fetch` steps of a local step gate
 * (`Fetch http://127.0.0.1:P/<tag>/0 then fetch …/1 then …`; the executor may reach
 * 127.0.0.1 through HTTP_TOOL_ALLOW_HOSTS). The gate holds each request until the test opens
 * that step, so when step 1's request arrives the test knows step 0 is recorded and step 1 is
 * running, and kills a process at exactly that point. No timing guesswork.
 *
 * The orchestrator's reaper runs fast here (STALL_AFTER_MS 3000, REAPER_INTERVAL_MS 500) so
 * a task left stalled by a crash is picked up within seconds.
 *
 * A third case makes the "recorded step is not run again" rule observable on its own: a step
 * result that never reached the orchestrator (as when the executor dies between recording a
 * step and publishing its result) is recovered by the reaper's re-dispatch, which the
 * executor answers from its record without running the step again.
 */
describe('crash safety: kill -9 mid-workflow', () => {
  const STEPS = 4;
  let stack: Stack;
  let gate: StepGate;
  let account: Account;
  let api: Api;

  beforeAll(async () => {
    gate = await startStepGate();
    stack = await startStack({
      env: {
        // Step claims last the step timeout + 5 s: a short timeout keeps the takeover after a crash quick.
        'task-orchestrator': { STALL_AFTER_MS: '3000', REAPER_INTERVAL_MS: '500', STEP_TIMEOUT_MS: '15000' },
        executor: { HTTP_TOOL_ALLOW_HOSTS: '127.0.0.1' },
      },
    });
    account = await createAccount(stack, 'crash-e2e');
    api = new Api(stack.baseUrl, account.api_keys.test);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await gate?.close();
  });

  const newTag = (p: string) => `${p}${randomBytes(4).toString('hex')}`;

  /** Starts the 4-step workflow and returns once step 0 is recorded and step 1 is running (held at the gate). */
  async function startAndReachStep1(tag: string): Promise<string> {
    gate.open(tag, 0);
    const created = await api.create({ prompt: gate.prompt(tag, STEPS) });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'running', tool: 'http' });
    // Step 1 is only dispatched after step 0's result was recorded by the executor and applied by the orchestrator.
    await gate.hit(tag, 1);
    expect((await api.get(created.json.id)).json.status).toBe('running');
    expect((await stepRunsOf(stack, created.json.id)).map((r) => r._id)).toEqual([`${created.json.id}:0`]);
    return created.json.id as string;
  }

  /** The task ended complete, every step ran, and the trace and the executor's records hold each step exactly once. */
  async function expectCompletedOnce(id: string, tag: string) {
    const done = await api.until(id, ['complete', 'failed', 'cancelled'], 60_000);
    expect(done).toMatchObject({ id, status: 'complete', tool: 'http' });
    expect(done.result.steps).toHaveLength(STEPS);
    done.result.steps.forEach((s: { status: number; json: unknown }, i: number) =>
      expect(s).toMatchObject({ status: 200, json: { tag, step: i, ok: true } }),
    );

    const trace = await api.trace(id);
    expect(trace.status).toBe(200);
    expect(trace.json.steps).toEqual(
      Array.from({ length: STEPS }, () => ({ tool: 'http', action: 'fetch', status: 'complete', duration_ms: expect.any(Number) })),
    );
    const runs = await stepRunsOf(stack, id);
    expect(runs.map((r) => r._id)).toEqual(Array.from({ length: STEPS }, (_, i) => `${id}:${i}`));
    return done;
  }

  it('finishes the workflow after the executor is killed with -9 while a step runs, without re-running finished steps', async () => {
    const tag = newTag('ex');
    const id = await startAndReachStep1(tag);

    const killedAt = Date.now();
    await killAndRestart(stack, 'executor', async () => {
      // The killed executor's request for step 1 died with it.
      await waitFor(() => gate.hitsOf(tag, 1)[0]?.aborted, { what: 'the killed step 1 request to be dropped' });
      // Stay down until the reaper has found the task stalled and re-dispatched step 1, so the
      // restarted executor gets step 1 twice: the redelivered message and the reaper's.
      const orchestrator = stack.procs.get('task-orchestrator');
      const reconciles = () => orchestrator?.output().split('reaper asked for reconcile').length ?? 0;
      const before = reconciles();
      await waitFor(() => reconciles() > before, { what: 'the reaper to re-dispatch the stalled step', timeoutMs: 20_000 });
      expect((await api.get(id)).json.status).toBe('running');
    });
    gate.openAll(tag);

    await expectCompletedOnce(id, tag);
    // Step 0 finished before the crash and is never run again; step 1 ran again exactly once:
    // the redelivered message and the reaper's re-dispatch do not run it side by side (step claims).
    expect(gate.hitsOf(tag, 0).filter((h) => h.at >= killedAt)).toEqual([]);
    expect(gate.hitsOf(tag, 1).filter((h) => h.at >= killedAt).length).toBe(1);
    for (const s of [2, 3]) expect(gate.hitsOf(tag, s).length).toBeGreaterThanOrEqual(1);
  });

  it('finishes the workflow after the orchestrator is killed with -9 mid-workflow, without re-running finished steps', async () => {
    const tag = newTag('or');
    const id = await startAndReachStep1(tag);

    let step1RecordedAt = 0;
    await killAndRestart(stack, 'task-orchestrator', async () => {
      // While the orchestrator is down the executor finishes step 1 and records it; its
      // step.result waits in the orchestrator's durable partition queue.
      gate.open(tag, 1);
      await waitFor(async () => (await stepRunsOf(stack, id)).length === 2, { what: 'step 1 recorded while the orchestrator is down' });
      step1RecordedAt = Date.now();
      const trace = await api.trace(id);
      expect(trace.json.steps).toHaveLength(2);
      // Nothing moves the workflow on while its single writer is dead.
      await sleep(500);
      expect(gate.hitsOf(tag, 2)).toEqual([]);
      expect((await api.get(id)).json.status).toBe('running');
    });
    gate.openAll(tag);

    await expectCompletedOnce(id, tag);
    // Steps 0 and 1 finished before the restart and were not run again, even if the reaper
    // re-dispatched step 1 (the executor answers a recorded step from its record).
    expect(gate.hitsOf(tag, 0).filter((h) => h.at >= step1RecordedAt)).toEqual([]);
    expect(gate.hitsOf(tag, 1)).toHaveLength(1);
    for (const s of [2, 3]) expect(gate.hitsOf(tag, s).length).toBeGreaterThanOrEqual(1);
  });

  it('recovers a lost step result through the reaper, answering the re-dispatched step from its record without running it again', async () => {
    const tag = newTag('lost');
    const id = await startAndReachStep1(tag);
    await stack.stop('task-orchestrator', 'SIGKILL');

    // With the orchestrator gone, stand in as the active consumer of its partition queues and
    // swallow step 1's result: as if the executor had died right after recording the step.
    const thief = new Broker({
      url: AMQP_URL,
      source: 'crash-e2e',
      namespace: stack.namespace,
      logger: createLogger({ service: 'e2e', stream: new PassThrough(), level: 'error' }),
    });
    await thief.connect();
    const swallowed: StepResult[] = [];
    try {
      for (let p = 0; p < DEFAULT_PARTITIONS; p++) {
        await thief.consume({ ...QUEUES.orchestratorPartition(p), singleActiveConsumer: true }, async (d) => {
          if (d.type === 'step.result') swallowed.push(d.data);
        });
      }
      gate.open(tag, 1);
      await waitFor(() => swallowed.find((r) => r.task_id === id && r.step_index === 1), { what: "step 1's result, swallowed" });
    } finally {
      await thief.close(1000);
    }
    expect((await stepRunsOf(stack, id)).map((r) => r.step_index)).toEqual([0, 1]);
    const step1Fetches = gate.hitsOf(tag, 1).length;
    expect(step1Fetches).toBe(1);

    // The restarted orchestrator never hears of step 1: only the reaper can move the task on.
    const proc = await stack.start('task-orchestrator');
    gate.openAll(tag);
    await expectCompletedOnce(id, tag);
    expect(proc.output()).toContain('reaper asked for reconcile');
    // Step 1 was dispatched again and answered from the executor's record: no second fetch.
    expect(gate.hitsOf(tag, 1)).toHaveLength(step1Fetches);
  });
});
