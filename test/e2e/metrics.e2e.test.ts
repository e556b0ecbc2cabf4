import { admin, request, startReceiver, startStack, waitFor, type Stack } from '@tes/testing';

/** Issue 8: every service exposes Prometheus metrics on its ops port, fed by real work. */
describe('/metrics on every service', () => {
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack();
    const account = await admin(['accounts', 'create', '--name', 'metrics'], stack.adminEnv);
    await admin(['webhooks', 'set', '--account', account.account_id, '--env', 'test', '--url', receiver.url], stack.adminEnv);
    const created = await request('POST', `${stack.baseUrl}/tasks`, {
      headers: { authorization: `Bearer ${account.api_keys.test}` },
      body: { prompt: 'Echo "metrics"' },
    });
    expect(created.status).toBe(201);
    await waitFor(() => receiver.received.length > 0, { what: 'the webhook' });
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await receiver?.close();
  });

  const scrape = async (port: number) => {
    const r = await request('GET', `http://127.0.0.1:${port}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    expect(r.text).toContain('process_resident_memory_bytes');
    return r.text;
  };

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

  it('webhook-dispatcher: attempts by outcome', async () => {
    const text = await waitFor(async () => {
      const t = await scrape(stack.opsPorts['webhook-dispatcher']);
      return /webhook_attempts_total\{[^}]*outcome="delivered"[^}]*\} 1/.test(t) ? t : undefined;
    });
    expect(text).toContain('queue_consume_lag_seconds');
  });

  it('oauth-vault: token refresh counter registered', async () => {
    const text = await scrape(stack.opsPorts['oauth-vault']);
    expect(text).toContain('# TYPE token_refreshes_total counter');
  });
});
