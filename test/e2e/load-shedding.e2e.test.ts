import { request, type HttpResult, type Stack } from '@tes/testing';
import { OpenApi, bearer, newAccount, roomInWindow, sleep, startApiStack, type Account } from './conformance.support.js';

/**
 * Load shedding of creates (gateway CREATE_SHED_AFTER_MS): while an account's oldest create has
 * waited longer than the bound for the orchestrator, the account's next creates are answered
 * 503 at once, without counting against its rate limit; other accounts still wait their turn.
 * The orchestrator is stopped, which is what a queue that does not move looks like from the gateway.
 */
/** The value of a gauge of the gateway's /metrics text. */
const gauge = (text: string, name: string): number => Number(new RegExp(`^${name}\\{service="gateway"\\} (\\S+)$`, 'm').exec(text)?.[1]);

describe('gateway load shedding of creates', () => {
  let stack: Stack;
  let api: OpenApi;
  let a: Account;
  let b: Account;

  const create = async (key: string, prompt: string): Promise<HttpResult & { ms: number }> => {
    const t0 = Date.now();
    const r = await request('POST', `${stack.baseUrl}/tasks`, { headers: bearer(key), body: { prompt } });
    return { ...api.check('POST', '/tasks', r), ms: Date.now() - t0 };
  };

  beforeAll(async () => {
    stack = await startApiStack({ gateway: { REQUEST_TIMEOUT_MS: '4000', CREATE_TIMEOUT_MS: '4000', CREATE_SHED_AFTER_MS: '1000' } });
    api = await OpenApi.fetch(stack);
    [a, b] = [await newAccount(stack), await newAccount(stack)];
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
  });

  it('answers an account whose create has waited over 1 s with an immediate 503 and Retry-After, counts nothing, and takes creates again once the queue moves', async () => {
    await roomInWindow(25);
    expect((await create(a.api_keys.test, 'Echo "before"')).status).toBe(201); // counted: 1
    await stack.stop('task-orchestrator');

    const stuck = create(a.api_keys.test, 'Echo "stuck"'); // counted: 2; waits for the timeout
    await sleep(1300);
    const shed = await create(a.api_keys.test, 'Echo "shed"');
    expect(shed.status).toBe(503);
    expect(shed.json).toEqual({ error: { code: 'temporarily_unavailable', message: expect.any(String) } });
    expect(shed.headers['retry-after']).toBe('1');
    expect(shed.ms).toBeLessThan(700);
    expect(shed.headers['x-ratelimit-remaining']).toBeUndefined(); // shed before the rate limit: not counted
    const metrics = await request('GET', `http://127.0.0.1:${stack.opsPorts.gateway}/metrics`);
    expect(metrics.text).toMatch(/^creates_shed_total\{service="gateway"\} 1$/m);
    // The stuck create is still waiting; the shed one was never sent. The gateway shed it because
    // the stuck one had waited over 1 s by then (1.3 s is the client's clock: it counts the request's
    // own way to the gateway too), so the gauge read afterwards is above 1 s.
    expect(metrics.text).toMatch(/^creates_awaiting_answer\{service="gateway"\} 1$/m);
    expect(gauge(metrics.text, 'creates_oldest_wait_seconds')).toBeGreaterThan(1);

    // Another account is not shed for this one's backlog: its create waits (and times out here).
    const other = await create(b.api_keys.test, 'Echo "other"');
    expect(other.ms).toBeGreaterThan(3000);
    expect([other.status, other.json.error?.code]).toEqual([503, 'temporarily_unavailable']);

    const first = await stuck;
    expect([first.status, first.json.error?.code]).toEqual([503, 'temporarily_unavailable']);
    expect(first.ms).toBeGreaterThan(3000);

    await stack.start('task-orchestrator');
    const after = await create(a.api_keys.test, 'Echo "after"');
    expect(after.status).toBe(201);
    const drained = (await request('GET', `http://127.0.0.1:${stack.opsPorts.gateway}/metrics`)).text;
    expect([gauge(drained, 'creates_awaiting_answer'), gauge(drained, 'creates_oldest_wait_seconds')]).toEqual([0, 0]);
    // before, stuck and after were counted; the shed create was not.
    expect(after.headers['x-ratelimit-remaining']).toBe('97');
  }, 60_000);
});
