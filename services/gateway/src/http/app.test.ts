import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoryLogger, waitFor } from '@tes/testing';
import type { Broker } from '@tes/messaging';
import { buildOpenApiDocument } from '../openapi/openapi.js';
import { generateApiKey, hashApiKey } from '../domain/api-key.js';
import type { AccountRepository } from '../store/account.repository.js';
import type { IdempotencyRepository } from '../store/idempotency.repository.js';
import type { RateDecision, RateLimitRepository } from '../store/rate-limit.repository.js';
import type { TaskViewRepository } from '../store/task-view.repository.js';
import { createApp } from './app.js';

/**
 * The app in process with stand-ins for its stores (the e2e suites run it for real):
 * routing before authentication, the envelope on every error, and no internals in a 500.
 */
describe('public API app', () => {
  const { logger, lines } = memoryLogger('gateway');
  const key = generateApiKey('test');
  let failStore = false;
  let decision: RateDecision = { admitted: true, limit: 100, remaining: 99, reset: 1_800_000_060, retryAfter: 30 };
  const accounts = {
    keyAndAccount: async (hash: string) => {
      if (failStore) throw new Error('connect ECONNREFUSED 10.9.8.7:27017 (mongodb://admin:hunter2@db)');
      return hash === hashApiKey(key)
        ? {
            key: {
              _id: 'key_1',
              account_id: 'acct_1',
              environment: 'test',
              hash,
              prefix: 'pk_test_',
              last4: 'xxxx',
              status: 'active',
              created_at: new Date(),
            },
            account: { _id: 'acct_1', name: 'a', plan: 'prototyping', status: 'active', created_at: new Date() },
          }
        : { key: null, account: null };
    },
  } as unknown as AccountRepository;
  /** task_seen exists (cancel and trace get as far as asking); any other task is unknown. */
  const preview = { tool: 'text', steps: [{ tool: 'text', action: 'echo', side_effect: 'read', input: { text: 'x' }, missing: [] }] };
  const views = {
    get: async (id: string) =>
      id === 'task_seen'
        ? { _id: id, account_id: 'acct_1', environment: 'test', status: 'running', version: 1 }
        : id === 'task_previewed'
          ? {
              _id: id,
              account_id: 'acct_1',
              environment: 'test',
              status: 'complete',
              result: { preview },
              planner: { name: 'rules', fallback_reason: 'the model answered HTTP 500' },
              version: 2,
            }
          : null,
    list: async () => [],
    apply: async () => undefined,
  } as unknown as TaskViewRepository;
  /** What the app asked of the other services, with each request's correlation id. */
  const asked: { type: string; correlationId: string | undefined }[] = [];
  const waited: Record<string, number> = {};
  const replies: Record<string, object> = {
    'task.create': { ok: true, version: 1, task: { id: 'task_new', status: 'running', tool: 'text', created_at: '2026-01-01T00:00:00Z' } },
    'task.cancel': { ok: true, version: 2, task: { id: 'task_seen', status: 'cancelled', cancelled_at: '2026-01-01T00:00:00Z' } },
    'trace.get': { ok: true, trace: { task_id: 'task_seen', steps: [], total_duration_ms: 0 } },
    'trace.get:task_previewed': { ok: true, trace: { task_id: 'task_previewed', steps: [], total_duration_ms: 0 } },
    'connections.list': { ok: true, connections: [] },
    'settings_link.create': { ok: true, url: 'https://vault.example/settings?token=t', expires_at: '2026-01-01T00:00:00Z' },
    'tool.register': { ok: true, tool: { name: 'my_tool' }, created: true },
    'tool.list': { ok: true, tools: [{ name: 'my_tool' }] },
  };
  const broker = {
    request: async (type: string, data: { task_id?: string }, opts: { correlationId?: string; timeoutMs: number }) => {
      asked.push({ type, correlationId: opts.correlationId });
      waited[type] = opts.timeoutMs;
      return replies[`${type}:${data.task_id}`] ?? replies[type] ?? { ok: true };
    },
  } as unknown as Broker;
  const rateLimits = { acquire: async () => decision } as unknown as RateLimitRepository;
  const app = createApp({
    broker,
    accounts,
    views,
    rateLimits,
    idempotencyKeys: {} as IdempotencyRepository,
    logger,
    requestTimeoutMs: 1000,
    createTimeoutMs: 25_000,
    bodyLimitBytes: 1024,
    idempotencyLeaseMs: 30_000,
  });
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });
  afterEach(() => {
    failStore = false;
    decision = { admitted: true, limit: 100, remaining: 99, reset: 1_800_000_060, retryAfter: 30 };
  });

  const auth = { authorization: `Bearer ${key}` };
  const call = async (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: init.headers ?? {},
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
  };

  it('answers an unknown route 404 not_found in the envelope, without asking for a key', async () => {
    for (const path of ['/', '/v1', '/v1/nope', '/v2/tasks', '/v1/tasks/task_1/nope', '/V1/tasks']) {
      const r = await call('GET', path);
      expect([path, r.status, r.json]).toEqual([path, 404, { error: { code: 'not_found', message: expect.any(String) } }]);
      expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    }
  });

  it('answers a wrong method 405 method_not_allowed with Allow, before authentication', async () => {
    const cases: [string, string, string][] = [
      ['DELETE', '/v1/tasks', 'POST, GET, HEAD'],
      ['PUT', '/v1/tasks/task_1', 'GET, HEAD'],
      ['GET', '/v1/tasks/task_1/cancel', 'POST'],
      ['POST', '/v1/tasks/task_1/trace', 'GET, HEAD'],
      ['POST', '/v1/users/u1/connections', 'GET, HEAD'],
      ['GET', '/v1/users/u1/connections/github', 'DELETE'],
      ['POST', '/v1/openapi.json', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const r = await call(method, path);
      expect([method, path, r.status, r.headers.get('allow'), r.json.error.code]).toEqual([method, path, 405, allow, 'method_not_allowed']);
    }
  });

  it('serves the OpenAPI document without a key', async () => {
    const r = await call('GET', '/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.json).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  it('mounts every documented operation behind authentication', async () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const path = `/v1${template.replace('{task_id}', 'task_1').replace('{user_id}', 'u1').replace('{service}', 'github')}`;
        const r = await call(method.toUpperCase(), path);
        const expected = op.security?.length === 0 ? 200 : 401;
        expect([method, path, r.status]).toEqual([method, path, expected]);
      }
    }
  });

  it('answers 500 internal_error without internals when a dependency fails, and logs it', async () => {
    failStore = true;
    const r = await call('GET', '/v1/tasks', { headers: auth });
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ error: { code: 'internal_error', message: 'An internal error occurred; retry with exponential backoff' } });
    expect(r.text).not.toMatch(/ECONNREFUSED|10\.9\.8\.7|hunter2|stack|at /);
    expect(r.headers.get('x-request-id')).toBeTruthy();
    expect(lines().some((l) => l.includes('unhandled error') && l.includes('ECONNREFUSED'))).toBe(true);
  });

  it('sets the rate-limit headers on an authenticated answer and refuses with 429 and Retry-After', async () => {
    const ok = await call('GET', '/v1/tasks/task_1', { headers: auth });
    expect(ok.status).toBe(404);
    expect([ok.headers.get('x-ratelimit-limit'), ok.headers.get('x-ratelimit-remaining'), ok.headers.get('x-ratelimit-reset')]).toEqual([
      '100',
      '99',
      '1800000060',
    ]);
    decision = { admitted: false, limit: 100, remaining: 0, reset: 1_800_000_060, retryAfter: 17 };
    const refused = await call('GET', '/v1/tasks', { headers: auth });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('rate_limit_exceeded');
    expect(refused.headers.get('retry-after')).toBe('17');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('reads no body before authentication, then 413 and malformed JSON in the envelope', async () => {
    const big = JSON.stringify({ prompt: 'x'.repeat(2000) });
    const anon = await call('POST', '/v1/tasks', { headers: { 'content-type': 'application/json' }, body: big });
    expect(anon.status).toBe(401);
    const tooBig = await call('POST', '/v1/tasks', { headers: { ...auth, 'content-type': 'application/json' }, body: big });
    expect([tooBig.status, tooBig.json.error.code]).toEqual([413, 'request_too_large']);
    const bad = await call('POST', '/v1/tasks', { headers: { ...auth, 'content-type': 'application/json' }, body: '{"prompt": ' });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ error: { code: 'invalid_request', message: 'Request body is not valid JSON' } });
  });

  it('names the field of a bad list query parameter', async () => {
    const cases: [string, RegExp][] = [
      ['limit=101', /limit/],
      ['limit=0', /limit/],
      ['limit=abc', /limit/],
      ['offset=-1', /offset/],
      ['status=done', /status must be one of: pending, running, complete, failed, waiting, cancelled/],
      ['color=red', /color/],
    ];
    for (const [q, message] of cases) {
      const r = await call('GET', `/v1/tasks?${q}`, { headers: auth });
      expect([q, r.status, r.json.error.code]).toEqual([q, 400, 'invalid_request']);
      expect(r.json.error.message).toMatch(message);
    }
    const fine = await call('GET', '/v1/tasks?limit=100&offset=0&status=running', { headers: auth });
    expect(fine.json).toEqual({ data: [], has_more: false });
  });

  it('asks the other services under the request id as correlation id, on every route that asks', async () => {
    const manifest = {
      name: 'my_tool',
      description: 'a tool',
      base_url: 'https://api.example.com',
      actions: [{ name: 'list_things', description: 'lists', method: 'GET', path: '/things', input_schema: { type: 'object' } }],
    };
    const json = { ...auth, 'content-type': 'application/json' };
    const cases: [string, string, number, string[], string?][] = [
      ['POST', '/v1/tasks', 201, ['task.create'], JSON.stringify({ prompt: 'Echo "x"' })],
      ['POST', '/v1/tasks/task_seen/cancel', 200, ['task.cancel']],
      ['GET', '/v1/tasks/task_seen/trace', 200, ['trace.get']],
      ['GET', '/v1/users/u1/connections', 200, ['connections.list']],
      ['DELETE', '/v1/users/u1/connections/github', 204, ['connection.revoke']],
      ['POST', '/v1/users/u1/settings_link', 201, ['settings_link.create']],
      ['POST', '/v1/tools', 201, ['provider.delete', 'tool.register'], JSON.stringify(manifest)],
      ['GET', '/v1/tools', 200, ['tool.list']],
      ['GET', '/v1/tools/my_tool', 200, ['tool.list']],
      ['DELETE', '/v1/tools/my_tool', 204, ['tool.delete', 'provider.delete']],
    ];
    for (const [i, [method, path, status, types, body]] of cases.entries()) {
      const id = `req_unit_corr_${i}`;
      asked.length = 0;
      const r = await call(method, path, { headers: { ...json, 'x-request-id': id }, ...(body !== undefined ? { body } : {}) });
      expect([method, path, r.status]).toEqual([method, path, status]);
      expect([method, path, asked]).toEqual([method, path, types.map((type) => ({ type, correlationId: id }))]);
    }
  });

  it('answers a refused create 422 with its code, message, suggestion and what is missing, after waiting the create timeout', async () => {
    const json = { ...auth, 'content-type': 'application/json' };
    const saved = replies['task.create']!;
    try {
      for (const code of ['no_matching_tool', 'missing_input', 'unsupported_request']) {
        const error = {
          code,
          message: `refused: ${code}`,
          suggestion: 'Say it differently',
          ...(code === 'missing_input' ? { missing: ['step 1 (gmail.send_email): subject'] } : {}),
        };
        replies['task.create'] = { ok: false, error };
        const r = await call('POST', '/v1/tasks', { headers: json, body: JSON.stringify({ prompt: 'something' }) });
        expect([code, r.status, r.json]).toEqual([code, 422, { error }]);
      }
    } finally {
      replies['task.create'] = saved;
    }
    await call('POST', '/v1/tasks/task_seen/cancel', { headers: auth });
    expect([waited['task.create'], waited['task.cancel']]).toEqual([25_000, 1000]);
  });

  it("adds the planner and a test task's planned steps to the executor's trace", async () => {
    const r = await call('GET', '/v1/tasks/task_previewed/trace', { headers: auth });
    expect(r.json).toEqual({
      task_id: 'task_previewed',
      steps: [],
      total_duration_ms: 0,
      planner: { name: 'rules', fallback_reason: 'the model answered HTTP 500' },
      planned_steps: preview.steps,
    });
    const running = await call('GET', '/v1/tasks/task_seen/trace', { headers: auth });
    expect(running.json).toEqual({ task_id: 'task_seen', steps: [], total_duration_ms: 0 });
  });

  it('logs one line per request once answered, with the account when known and never the key', async () => {
    const before = lines().length;
    const ok = await call('GET', '/v1/tasks?limit=5', { headers: { ...auth, 'x-request-id': 'req_unit_log_ok' } });
    const anon = await call('GET', '/v1/tasks', { headers: { 'x-request-id': 'req_unit_log_anon' } });
    expect([ok.status, anon.status]).toEqual([200, 401]);
    const finished = () =>
      lines()
        .slice(before)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l['message'] === 'request finished');
    const logged = await waitFor(() => finished().length >= 2 && finished(), { what: 'two request lines', timeoutMs: 2000 });
    expect(logged).toEqual([
      expect.objectContaining({
        level: 'info',
        method: 'GET',
        path: '/v1/tasks',
        status: 200,
        request_id: 'req_unit_log_ok',
        account_id: 'acct_1',
      }),
      expect.objectContaining({ level: 'info', method: 'GET', path: '/v1/tasks', status: 401, request_id: 'req_unit_log_anon' }),
    ]);
    expect(logged[1]).not.toHaveProperty('account_id');
    for (const l of logged) expect(typeof l['duration_ms']).toBe('number');
    expect(lines().slice(before).join('\n')).not.toMatch(/authorization|Bearer|pk_test_/i);
  });
});
