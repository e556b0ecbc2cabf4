import { admin, request, startReceiver, startStack, waitFor, type Stack } from '@tes/testing';

/** Issue 8: every service exposes Prometheus metrics on its ops port, fed by real work. */
describe('/metrics on every service', () => {
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let apiKey: string;
  /** The dispatcher's metrics before any task existed. */
  let dispatcherBefore: string;

  const createTask = async (prompt: string) => {
    const created = await request('POST', `${stack.baseUrl}/tasks`, { headers: { authorization: `Bearer ${apiKey}` }, body: { prompt } });
    expect(created.status).toBe(201);
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack();
    const account = await admin(['accounts', 'create', '--name', 'metrics'], stack.adminEnv);
    apiKey = account.api_keys.test;
    await admin(['webhooks', 'set', '--account', account.account_id, '--env', 'test', '--url', receiver.url], stack.adminEnv);
    dispatcherBefore = await scrape(stack.opsPorts['webhook-dispatcher']);
    await createTask('Echo "metrics"');
    await waitFor(() => receiver.received.length > 0, { what: 'the webhook' });
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await receiver?.close();
  });

  async function scrape(port: number): Promise<string> {
    const r = await request('GET', `http://127.0.0.1:${port}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    expect(r.text).toContain('process_resident_memory_bytes');
    return r.text;
  }

  it('gateway: HTTP latency by matched route', async () => {
    const text = await scrape(stack.opsPorts.gateway);
    expect(text).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/v1\/tasks"[^}]*status="201"/);
  });

  it('orchestrator: tasks by status and consume lag per queue', async () => {
    const text = await scrape(stack.opsPorts['task-orchestrator']);
    expect(text).toMatch(/tasks_total\{[^}]*status="complete"[^}]*\} 1/);
    expect(text).toMatch(/queue_consume_lag_seconds_count\{[^}]*queue="orchestrator\.p\d"/);
  });

  it('executor: step durations by tool, action and outcome', async () => {
    const text = await scrape(stack.opsPorts.executor);
    expect(text).toMatch(/step_duration_seconds_count\{[^}]*tool="text"[^}]*action="echo"[^}]*outcome="complete"[^}]*\} 1/);
  });

  it('webhook-dispatcher: a real delivery adds to the attempt counter and the latency histogram', async () => {
    const delivered = ['outcome="delivered"'];
    expect(sample(dispatcherBefore, 'webhook_attempts_total', delivered)).toBe(0);
    expect(sample(dispatcherBefore, 'webhook_delivery_latency_seconds_count', delivered)).toBe(0);

    const text = await waitFor(async () => {
      const t = await scrape(stack.opsPorts['webhook-dispatcher']);
      return sample(t, 'webhook_attempts_total', delivered) >= 1 ? t : undefined;
    });
    const attempts = sample(text, 'webhook_attempts_total', delivered);
    // Every counted attempt is a POST the receiver answered, and each one's duration is observed.
    expect(attempts).toBeLessThanOrEqual(receiver.received.length);
    expect(sample(text, 'webhook_delivery_latency_seconds_count', delivered)).toBe(attempts);
    expect(sample(text, 'webhook_delivery_latency_seconds_bucket', [...delivered, 'le="+Inf"'])).toBe(attempts);
    expect(sample(text, 'webhook_delivery_latency_seconds_sum', delivered)).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'webhook_delivery_latency_seconds_sum', delivered)).toBeLessThan(30 * attempts);
    expect(text).toMatch(/queue_consume_lag_seconds_count\{[^}]*queue="dispatcher\.task-events"/);
  });

  it('webhook-dispatcher: a 3xx answer is counted and timed as redirect', async () => {
    const port = stack.opsPorts['webhook-dispatcher'];
    const redirect = ['outcome="redirect"'];
    const before = await scrape(port);
    receiver.behave('redirect');
    await createTask('Echo "redirected"');
    const after = await waitFor(
      async () => {
        const t = await scrape(port);
        return sample(t, 'webhook_attempts_total', redirect) > sample(before, 'webhook_attempts_total', redirect) ? t : undefined;
      },
      { what: 'a redirect attempt' },
    );
    const added = sample(after, 'webhook_attempts_total', redirect) - sample(before, 'webhook_attempts_total', redirect);
    expect(
      sample(after, 'webhook_delivery_latency_seconds_count', redirect) -
        sample(before, 'webhook_delivery_latency_seconds_count', redirect),
    ).toBe(added);
  });

  it('oauth-vault: token refresh counter registered', async () => {
    const text = await scrape(stack.opsPorts['oauth-vault']);
    expect(text).toContain('# TYPE token_refreshes_total counter');
  });
});

/** The value of the first series of `name` whose labels include every one of `labels`; 0 when there is none. */
function sample(text: string, name: string, labels: readonly string[]): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
