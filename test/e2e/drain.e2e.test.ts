import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startStack, waitFor, type ServiceName, type ServiceProcess, type Stack } from '@tes/testing';
import { Api, createAccount, sleep, stepRunsOf, type Account } from '../support/e2e.js';
import { startStepGate, type StepGate } from '../support/step-gate.js';

/**
 * Safe drains, with the five services as real processes on their default SHUTDOWN_TIMEOUT_MS: a
 * SIGTERM (a rollout, a scale-down) in the middle of the longest kinds of work lets that work
 * finish, once, and the process then exits 0. Before, a 10 s budget cut a 25 s delivery or a 20 s
 * step short: the work came back a lease later and was done a second time.
 *
 * - The dispatcher is stopped while its first delivery waits on a receiver that answers after
 *   25 s (under the 30 s WEBHOOK_TIMEOUT_MS). CLAIM_MARGIN_MS is 1 s here, so an abandoned
 *   delivery would be taken over by the restarted dispatcher 31 s after its claim: the test
 *   waits past that and counts the deliveries of each event id.
 * - The executor is stopped while step 0 of a 2-step workflow waits on a slow HTTP server
 *   (test/support/step-gate.ts: the step's `http.fetch` target, answering after 20 s, under the
 *   30 s STEP_TIMEOUT_MS); a new executor then runs step 1. The server counts the requests.
 */
const DELIVERY_MS = 25_000;
const STEP_MS = 20_000;
const CLAIM_MARGIN_MS = 1000;
const WEBHOOK_TIMEOUT_MS = 30_000;

interface Received {
  eventId: string;
  event: string;
  taskId: string;
  receivedAt: number;
  answeredAt?: number;
  /** The dispatcher closed the connection before the answer. */
  aborted?: boolean;
}

/** A webhook receiver that answers its first request after `holdMs` and every later one at once. */
async function startSlowFirstReceiver(holdMs: number) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; task_id: string };
      const r: Received = { eventId: String(req.headers['webhook-id']), event: body.event, taskId: body.task_id, receivedAt: Date.now() };
      received.push(r);
      res.on('close', () => {
        if (r.answeredAt === undefined) r.aborted = true;
      });
      const answer = () => {
        if (r.aborted) return;
        r.answeredAt = Date.now();
        res.writeHead(200).end('ok');
      };
      if (received.length === 1) setTimeout(answer, holdMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('drain on SIGTERM: work in flight finishes once, then the process exits', () => {
  let stack: Stack;
  let gate: StepGate;
  let receiver: Awaited<ReturnType<typeof startSlowFirstReceiver>>;
  let account: Account;
  let api: Api;
  /** Every process this file started or stopped, so none outlives it whatever fails. */
  const procs: ServiceProcess[] = [];

  beforeAll(async () => {
    gate = await startStepGate();
    receiver = await startSlowFirstReceiver(DELIVERY_MS);
    stack = await startStack({
      env: {
        executor: { HTTP_TOOL_ALLOW_HOSTS: '127.0.0.1', HTTP_TOOL_TIMEOUT_MS: '60000' },
        'webhook-dispatcher': { CLAIM_MARGIN_MS: String(CLAIM_MARGIN_MS), WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS) },
      },
    });
    procs.push(...stack.procs.values());
    account = await createAccount(stack, 'drain-e2e', { url: receiver.url, envs: ['test'] });
    api = new Api(stack.baseUrl, account.api_keys.test);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await gate?.close();
    await receiver?.close();
  });

  const newTag = (p: string) => `${p}${randomBytes(4).toString('hex')}`;

  /** SIGTERM to one service; resolves with its exit code and when it exited. */
  async function terminate(name: ServiceName): Promise<{ code: number | null; exitedAt: number }> {
    const code = await stack.stop(name, 'SIGTERM');
    return { code, exitedAt: Date.now() };
  }

  async function restart(name: ServiceName): Promise<void> {
    procs.push(await stack.start(name));
  }

  it('a 25 s webhook delivery in flight at SIGTERM is delivered exactly once, and the dispatcher exits 0 after it', async () => {
    const tag = newTag('hook');
    gate.openAll(tag);
    const created = await api.create({ prompt: gate.prompt(tag, 1) });
    expect(created.status).toBe(201);
    const id = created.json.id as string;

    // The first delivery has reached the receiver, which holds it for 25 s.
    const first = await waitFor(() => receiver.received[0], { what: 'the first webhook delivery', timeoutMs: 30_000 });
    expect(first.taskId).toBe(id);
    const { code, exitedAt } = await terminate('webhook-dispatcher');

    expect(code).toBe(0);
    expect(first.aborted).toBeUndefined();
    expect(first.answeredAt).toBeDefined();
    // It waited for the answer (25 s after the request) before it exited.
    expect(exitedAt).toBeGreaterThanOrEqual(first.answeredAt as number);
    expect((first.answeredAt as number) - first.receivedAt).toBeGreaterThanOrEqual(DELIVERY_MS - 100);

    // A new replica delivers the rest; had the first delivery been abandoned, its claim would
    // expire WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS after it was made and it would come again.
    await restart('webhook-dispatcher');
    await waitFor(() => receiver.received.some((r) => r.taskId === id && r.event === 'task.complete'), {
      what: 'task.complete delivered by the new dispatcher',
      timeoutMs: 30_000,
    });
    const takeoverAt = first.receivedAt + WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS;
    await sleep(Math.max(0, takeoverAt + 5000 - Date.now()));

    const ofTask = receiver.received.filter((r) => r.taskId === id);
    const perEvent = new Map<string, number>();
    for (const r of ofTask) perEvent.set(r.eventId, (perEvent.get(r.eventId) ?? 0) + 1);
    expect(perEvent.get(first.eventId)).toBe(1);
    expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
    expect(ofTask.every((r) => r.answeredAt !== undefined)).toBe(true);
  }, 150_000);

  it('a 20 s step in flight at SIGTERM completes once and is not run again; the executor exits 0 after it', async () => {
    const tag = newTag('step');
    gate.open(tag, 1); // step 1 answers at once; step 0 is held
    const created = await api.create({ prompt: gate.prompt(tag, 2) });
    expect(created.status).toBe(201);
    const id = created.json.id as string;

    const hit = await gate.hit(tag, 0, { timeoutMs: 30_000 });
    // The slow server answers step 0 STEP_MS after it arrived; SIGTERM comes meanwhile.
    const answer = setTimeout(() => gate.open(tag, 0), Math.max(0, hit.at + STEP_MS - Date.now()));
    try {
      const { code, exitedAt } = await terminate('executor');
      expect(code).toBe(0);
      expect(hit.aborted).toBeUndefined();
      expect(hit.answeredAt).toBeDefined();
      expect(exitedAt).toBeGreaterThanOrEqual(hit.answeredAt as number);
    } finally {
      clearTimeout(answer);
      gate.open(tag, 0);
    }

    // The next replica takes step 1; the workflow completes.
    await restart('executor');
    const done = await api.until(id, ['complete', 'failed', 'cancelled'], 60_000);
    expect(done).toMatchObject({ id, status: 'complete' });
    expect(done.result.steps).toHaveLength(2);
    // Each step reached the slow server once, and was recorded once.
    expect(gate.hitsOf(tag, 0)).toHaveLength(1);
    expect(gate.hitsOf(tag, 1)).toHaveLength(1);
    expect((await stepRunsOf(stack, id)).map((r) => r.step_index)).toEqual([0, 1]);
  }, 150_000);
});
