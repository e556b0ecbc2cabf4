import { createHmac, timingSafeEqual } from 'node:crypto';
import { admin, request, startReceiver, startStack, waitFor, type Stack } from '@tes/testing';

/**
 * The walking skeleton, end to end over the real broker and database, with the five
 * services as real processes: create over HTTPS → orchestrator → executor → complete →
 * GET shows the result → a signed task.complete reaches a real webhook receiver.
 */
describe('walking skeleton', () => {
  let stack: Stack;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let account: { account_id: string; api_keys: { test: string; live: string }; webhook_secrets: { test: string; live: string } };

  beforeAll(async () => {
    receiver = await startReceiver();
    stack = await startStack({ env: { 'webhook-dispatcher': { WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200' } } });
    account = await admin(['accounts', 'create', '--name', 'e2e'], stack.adminEnv);
    await admin(['webhooks', 'set', '--account', account.account_id, '--env', 'test', '--url', receiver.url], stack.adminEnv);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await receiver?.close();
  });

  const auth = () => ({ authorization: `Bearer ${account.api_keys.test}` });

  it('runs a task from create to a signed task.complete webhook', async () => {
    const created = await request('POST', `${stack.baseUrl}/tasks`, {
      headers: auth(),
      body: { prompt: 'Echo "hello world"', metadata: { ref: 'e2e-1' } },
    });
    expect(created.status).toBe(201);
    expect(Object.keys(created.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool']);
    expect(created.json).toMatchObject({ status: 'running', tool: 'text', metadata: { ref: 'e2e-1' } });
    expect(created.json.id).toMatch(/^task_/);
    expect(created.json.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const id = created.json.id as string;
    const done = await waitFor(
      async () => {
        const r = await request('GET', `${stack.baseUrl}/tasks/${id}`, { headers: auth() });
        return r.json?.status === 'complete' ? r : undefined;
      },
      { what: 'task complete', timeoutMs: 20_000 },
    );
    expect(done.json).toMatchObject({ id, status: 'complete', tool: 'text', result: { text: 'hello world' }, metadata: { ref: 'e2e-1' } });
    expect(done.json.completed_at).toMatch(/Z$/);
    expect(done.json).not.toHaveProperty('error');
    expect(done.json).not.toHaveProperty('failed_at');

    const hook = await waitFor(() => receiver.received.find((r) => JSON.parse(r.rawBody).task_id === id), {
      what: 'webhook',
      timeoutMs: 20_000,
    });
    const body = JSON.parse(hook.rawBody);
    expect(body).toMatchObject({ event: 'task.complete', task_id: id, data: { text: 'hello world' } });
    expect(hook.headers['content-type']).toMatch(/^application\/json/);
    const expected = createHmac('sha256', account.webhook_secrets.test).update(hook.rawBody).digest('hex');
    const given = String(hook.headers['x-service-signature']).split(',')[0] ?? '';
    expect(given.length).toBe(expected.length);
    expect(timingSafeEqual(Buffer.from(given), Buffer.from(expected))).toBe(true);

    const trace = await request('GET', `${stack.baseUrl}/tasks/${id}/trace`, { headers: auth() });
    expect(trace.status).toBe(200);
    expect(trace.json).toMatchObject({ task_id: id, steps: [{ tool: 'text', action: 'echo', status: 'complete' }] });
    expect(Number.isInteger(trace.json.total_duration_ms)).toBe(true);
  });

  it('carries the request id through every hop: gateway, orchestrator, executor and dispatcher log lines', async () => {
    const requestId = `req_e2e_corr_${Date.now()}`;
    const created = await request('POST', `${stack.baseUrl}/tasks`, {
      headers: { ...auth(), 'x-request-id': requestId },
      body: { prompt: 'Echo "traced"' },
    });
    expect(created.status).toBe(201);
    expect(created.headers['x-request-id']).toBe(requestId);
    for (const name of ['gateway', 'task-orchestrator', 'executor', 'webhook-dispatcher'] as const) {
      await waitFor(() => stack.procs.get(name)?.output().includes(requestId), { what: `${name} logging ${requestId}`, timeoutMs: 20_000 });
    }
  });

  it('carries the request id of a cancel and a trace to the service that answers, and logs each request in the gateway', async () => {
    const created = await request('POST', `${stack.baseUrl}/tasks`, { headers: auth(), body: { prompt: 'Echo "cancel me"' } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const cancelId = `req_e2e_cancel_${Date.now()}`;
    const cancel = await request('POST', `${stack.baseUrl}/tasks/${id}/cancel`, { headers: { ...auth(), 'x-request-id': cancelId } });
    // Cancelled while running, or 409 task_already_complete if the echo won: the orchestrator decided either way.
    expect([200, 409]).toContain(cancel.status);
    expect(cancel.headers['x-request-id']).toBe(cancelId);
    const traceId = `req_e2e_trace_${Date.now()}`;
    const trace = await request('GET', `${stack.baseUrl}/tasks/${id}/trace`, { headers: { ...auth(), 'x-request-id': traceId } });
    expect(trace.status).toBe(200);

    const logLines = (name: 'gateway' | 'task-orchestrator' | 'executor') =>
      (stack.procs.get(name)?.output() ?? '').split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      });
    const handled = (name: 'task-orchestrator' | 'executor', type: string, correlationId: string) =>
      logLines(name).find((l) => l['type'] === type && l['correlation_id'] === correlationId);
    await waitFor(() => handled('task-orchestrator', 'task.cancel', cancelId), {
      what: `orchestrator logging ${cancelId}`,
      timeoutMs: 10_000,
    });
    await waitFor(() => handled('executor', 'trace.get', traceId), { what: `executor logging ${traceId}`, timeoutMs: 10_000 });

    const finished = (requestId: string) =>
      logLines('gateway').find((l) => l['message'] === 'request finished' && l['request_id'] === requestId);
    const [cancelLine, traceLine] = await waitFor(
      () => {
        const [c, t] = [finished(cancelId), finished(traceId)];
        return c && t ? [c, t] : undefined;
      },
      { what: 'the gateway request lines', timeoutMs: 10_000 },
    );
    expect(cancelLine).toMatchObject({ level: 'info', method: 'POST', path: `/v1/tasks/${id}/cancel`, status: cancel.status });
    expect(traceLine).toMatchObject({ level: 'info', method: 'GET', path: `/v1/tasks/${id}/trace`, status: 200 });
    for (const l of [cancelLine, traceLine]) {
      expect(l).toMatchObject({ account_id: account.account_id, duration_ms: expect.any(Number) });
      expect(JSON.stringify(l)).not.toMatch(/authorization|Bearer/i);
    }
    expect(stack.procs.get('gateway')?.output()).not.toContain(account.api_keys.test);
  });

  it('keeps test and live keys in separate worlds', async () => {
    const created = await request('POST', `${stack.baseUrl}/tasks`, { headers: auth(), body: { prompt: 'Echo "only in test"' } });
    expect(created.status).toBe(201);
    const asLive = await request('GET', `${stack.baseUrl}/tasks/${created.json.id}`, {
      headers: { authorization: `Bearer ${account.api_keys.live}` },
    });
    expect(asLive.status).toBe(404);
    expect(asLive.json).toEqual({ error: { code: 'task_not_found', message: expect.any(String) } });
  });

  it('rejects plain HTTP with 403 https_required', async () => {
    const r = await request('POST', `${stack.plainHttpUrl}/tasks`, { headers: auth(), body: { prompt: 'Echo "x"' } });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('https_required');
  });

  it('answers 401 missing_api_key and invalid_api_key in the envelope', async () => {
    const none = await request('GET', `${stack.baseUrl}/tasks`);
    expect(none.status).toBe(401);
    expect(none.json).toEqual({ error: { code: 'missing_api_key', message: expect.any(String) } });
    const bad = await request('GET', `${stack.baseUrl}/tasks`, { headers: { authorization: 'Bearer pk_test_nope' } });
    expect(bad.status).toBe(401);
    expect(bad.json.error.code).toBe('invalid_api_key');
  });

  it('stops every service cleanly on SIGTERM', async () => {
    const codes = await stack.stopAll();
    expect(codes).toEqual({ gateway: 0, 'task-orchestrator': 0, executor: 0, 'oauth-vault': 0, 'webhook-dispatcher': 0 });
  });
});
