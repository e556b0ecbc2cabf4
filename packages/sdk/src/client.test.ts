import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DEFAULT_BASE_URL, TaskServiceClient, type ClientOptions, type RetryInfo } from './client.js';
import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TaskServiceError,
  WaitTimeoutError,
} from './errors.js';
import { SDK_VERSION } from './version.js';

/**
 * The client's wire behaviour against a local scripted HTTP server: each request takes the
 * next scripted answer (the last one repeats) and is recorded as it arrived.
 */
interface Answer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Close the connection without answering. */
  destroy?: boolean;
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

const CREATED = { id: 'task_abc', status: 'running', tool: 'text', created_at: '2026-01-01T00:00:00.000Z', metadata: {} };
const envelope = (code: string, message = code) => ({ error: { code, message } });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function fakeServer(script: Answer[] | ((req: Seen, n: number) => Answer)) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        at: Date.now(),
      };
      seen.push(s);
      const n = seen.length - 1;
      const a = typeof script === 'function' ? script(s, n) : (script[Math.min(n, script.length - 1)] ?? {});
      setTimeout(() => {
        if (a.destroy) return req.socket.destroy();
        const body = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
        res.writeHead(a.status ?? 200, {
          'x-request-id': `req_${n}`,
          ...(body && typeof a.body !== 'string' ? { 'content-type': 'application/json' } : {}),
          ...a.headers,
        });
        res.end(body);
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    seen,
    baseUrl,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

let servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function setup(script: Parameters<typeof fakeServer>[0], options: ClientOptions = {}) {
  const server = await fakeServer(script);
  servers.push(server);
  const retries: RetryInfo[] = [];
  const client = new TaskServiceClient({
    apiKey: 'pk_test_key',
    baseUrl: server.baseUrl,
    retry: { initialDelayMs: 10, maxDelayMs: 40 },
    onRetry: (i) => retries.push(i),
    ...options,
  });
  return { server, client, seen: server.seen, retries };
}

async function caught(p: Promise<unknown>): Promise<TaskServiceError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof TaskServiceError) return err;
    throw err;
  }
  throw new Error('expected a TaskServiceError');
}

describe('TaskServiceClient: requests', () => {
  it('creates a task: POST /tasks with Bearer key, JSON body of the given fields only, and an Idempotency-Key UUID', async () => {
    const { client, seen } = await setup([{ status: 201, body: { ...CREATED, metadata: { ref: 'a' } } }]);
    const created = await client.createTask({ prompt: 'Echo "hi"', user_id: 'u_1', metadata: { ref: 'a' }, mode: 'test' });
    expect(created).toEqual({ ...CREATED, metadata: { ref: 'a' } });
    expect(seen).toHaveLength(1);
    const [req] = seen;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/v1/tasks');
    expect(req?.headers['authorization']).toBe('Bearer pk_test_key');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['user-agent']).toBe(`tes-sdk/${SDK_VERSION} node/${process.version}`);
    expect(req?.headers['idempotency-key']).toMatch(UUID);
    expect(JSON.parse(req?.body ?? '')).toEqual({ prompt: 'Echo "hi"', user_id: 'u_1', metadata: { ref: 'a' }, mode: 'test' });

    await client.createTask({ prompt: 'x' });
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ prompt: 'x' });
    expect(seen[1]?.headers['idempotency-key']).toMatch(UUID);
    expect(seen[1]?.headers['idempotency-key']).not.toBe(req?.headers['idempotency-key']);

    await client.createTask({ prompt: 'x' }, { idempotencyKey: 'order-42' });
    expect(seen[2]?.headers['idempotency-key']).toBe('order-42');
  });

  it('sends get, list, cancel, trace, connections and revoke to their paths, escaping path segments', async () => {
    const { client, seen } = await setup((req) => (req.method === 'DELETE' ? { status: 204 } : { body: { ok: req.url } }));
    await client.getTask('task_1');
    await client.getTask('a/b?c');
    await client.listTasks({ status: 'complete', user_id: 'u 1', limit: 5, offset: 10 });
    await client.listTasks();
    await client.cancelTask('task_1');
    await client.getTrace('task_1');
    await client.listConnections('user@x');
    await expect(client.revokeConnection('u1', 'github')).resolves.toBeUndefined();
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /v1/tasks/task_1',
      'GET /v1/tasks/a%2Fb%3Fc',
      'GET /v1/tasks?status=complete&user_id=u+1&limit=5&offset=10',
      'GET /v1/tasks',
      'POST /v1/tasks/task_1/cancel',
      'GET /v1/tasks/task_1/trace',
      'GET /v1/users/user%40x/connections',
      'DELETE /v1/users/u1/connections/github',
    ]);
    expect(seen.every((s) => s.headers['idempotency-key'] === undefined && s.headers['authorization'] === 'Bearer pk_test_key')).toBe(true);
    expect(seen[0]?.headers['content-type']).toBeUndefined();
  });

  it('exposes a replayed create (Idempotent-Replayed: true) as replayed, the body unchanged', async () => {
    // the gateway's answer to a repeated key: the original status and body, plus the header
    const { client, seen } = await setup((req) =>
      req.headers['idempotency-key'] === 'order-7' && seen.length > 1
        ? { status: 201, body: CREATED, headers: { 'idempotent-replayed': 'true' } }
        : { status: 201, body: CREATED },
    );
    const first = await client.createTask({ prompt: 'x' }, { idempotencyKey: 'order-7' });
    const again = await client.createTask({ prompt: 'x' }, { idempotencyKey: 'order-7' });
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['order-7', 'order-7']);
    expect(first.replayed).toBe(false);
    expect(again.replayed).toBe(true);
    // not part of the body: the result still equals, spreads and serializes as what was sent
    expect(again).toEqual(CREATED);
    expect(JSON.parse(JSON.stringify(again))).toEqual(CREATED);
    expect({ ...again }).toEqual(CREATED);
    expect(Object.keys(again)).not.toContain('replayed');
  });

  it('answers a 2xx create without a task body as TaskServiceError invalid_response', async () => {
    const { client } = await setup([{ status: 201 }]);
    const err = await caught(client.createTask({ prompt: 'x' }));
    expect(err).toMatchObject({ code: 'invalid_response', status: 201, requestId: 'req_0' });
  });

  it('iterates every page of a list', async () => {
    const page = (ids: string[], more: boolean) => ({
      body: { data: ids.map((id) => ({ id, status: 'complete', tool: 'text', created_at: 'x' })), has_more: more },
    });
    const { client, seen } = await setup([page(['a', 'b'], true), page(['c', 'd'], true), page(['e'], false)]);
    const ids: string[] = [];
    for await (const t of client.iterateTasks({ limit: 2 })) ids.push(t.id);
    expect(ids).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(seen.map((s) => s.url)).toEqual(['/v1/tasks?limit=2&offset=0', '/v1/tasks?limit=2&offset=2', '/v1/tasks?limit=2&offset=4']);
  });
});

describe('TaskServiceClient: custom tools and settings links', () => {
  const MANIFEST = {
    name: 'acme_crm',
    description: 'Contacts in the Acme CRM',
    base_url: 'https://crm.acme.example/api',
    oauth: { authorize_url: 'https://crm.acme.example/a', token_url: 'https://crm.acme.example/t', client_id: 'c', client_secret: 's' },
    actions: [
      {
        name: 'get_contact',
        description: 'Get a contact',
        method: 'GET' as const,
        path: '/contacts/{id}',
        input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      },
    ],
  };
  const { client_secret: _secret, ...publicOauth } = MANIFEST.oauth;
  const TOOL = { ...MANIFEST, oauth: publicOauth, created_at: '2026-01-01T00:00:00.000Z' };

  it('registers a tool: POST /tools with the manifest as the JSON body, no Idempotency-Key, and returns the tool', async () => {
    const { client, seen } = await setup([{ status: 201, body: TOOL }]);
    await expect(client.registerTool(MANIFEST)).resolves.toEqual(TOOL);
    expect(seen).toHaveLength(1);
    expect(`${seen[0]?.method} ${seen[0]?.url}`).toBe('POST /v1/tools');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(seen[0]?.headers['authorization']).toBe('Bearer pk_test_key');
    expect(seen[0]?.headers['idempotency-key']).toBeUndefined();
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual(MANIFEST);
  });

  it('lists, gets and deletes tools and creates settings links at their paths, escaping path segments', async () => {
    const LINK = { url: 'https://vault.example/settings?token=t', expires_at: '2026-01-01T01:00:00.000Z' };
    const { client, seen } = await setup((req) =>
      req.method === 'DELETE'
        ? { status: 204 }
        : req.url.endsWith('/settings_link')
          ? { status: 201, body: LINK }
          : req.url === '/v1/tools'
            ? { body: { data: [TOOL], has_more: false } }
            : { body: TOOL },
    );
    await expect(client.listTools()).resolves.toEqual({ data: [TOOL], has_more: false });
    await expect(client.getTool('acme_crm')).resolves.toEqual(TOOL);
    await client.getTool('a/b?c');
    await expect(client.deleteTool('acme_crm')).resolves.toBeUndefined();
    await expect(client.createSettingsLink('user@x/1')).resolves.toEqual(LINK);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /v1/tools',
      'GET /v1/tools/acme_crm',
      'GET /v1/tools/a%2Fb%3Fc',
      'DELETE /v1/tools/acme_crm',
      'POST /v1/users/user%40x%2F1/settings_link',
    ]);
    expect(seen.every((s) => s.body === '' && s.headers['content-type'] === undefined && s.headers['idempotency-key'] === undefined)).toBe(
      true,
    );
    expect(() => client.getTool('')).toThrow(TypeError);
    expect(() => client.createSettingsLink('')).toThrow(TypeError);
    expect(seen).toHaveLength(5);
  });

  it('answers NotFoundError not_found with the request id for an unknown tool, without retrying', async () => {
    const { client, seen, retries } = await setup([{ status: 404, body: envelope('not_found', 'No tool nope') }]);
    const got = await caught(client.getTool('nope'));
    expect(got).toBeInstanceOf(NotFoundError);
    expect(got).toMatchObject({ status: 404, code: 'not_found', message: 'No tool nope', requestId: 'req_0' });
    const deleted = await caught(client.deleteTool('nope'));
    expect(deleted).toBeInstanceOf(NotFoundError);
    expect(deleted).toMatchObject({ status: 404, code: 'not_found', requestId: 'req_1' });
    expect(seen).toHaveLength(2);
    expect(retries).toEqual([]);
  });

  it('does not retry a refused manifest (400) but retries a 503 with the same body', async () => {
    const bad = await setup([{ status: 400, body: envelope('invalid_request', 'name "github" is a built-in tool or service') }]);
    const err = await caught(bad.client.registerTool({ ...MANIFEST, name: 'github' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', message: expect.stringContaining('built-in') as string });
    expect(bad.seen).toHaveLength(1);

    const { client, seen, retries } = await setup([
      { status: 503, body: envelope('temporarily_unavailable'), headers: { 'retry-after': '0' } },
      { status: 200, body: TOOL },
    ]);
    await expect(client.registerTool(MANIFEST)).resolves.toEqual(TOOL);
    expect(seen).toHaveLength(2);
    expect(seen[1]?.body).toBe(seen[0]?.body);
    expect(retries.map((r) => [r.method, r.path, r.error.code])).toEqual([['POST', '/tools', 'temporarily_unavailable']]);

    const link = await setup([
      { status: 500, body: envelope('internal_error') },
      { status: 201, body: { url: 'u', expires_at: 'e' } },
    ]);
    await expect(link.client.createSettingsLink('u1')).resolves.toEqual({ url: 'u', expires_at: 'e' });
    expect(link.seen).toHaveLength(2);
  });
});

describe('TaskServiceClient: retries', () => {
  it('retries a 429 after Retry-After seconds, then returns the 201, with the same Idempotency-Key', async () => {
    const { client, seen, retries } = await setup([
      { status: 429, body: envelope('rate_limit_exceeded'), headers: { 'retry-after': '1', 'x-ratelimit-remaining': '0' } },
      { status: 201, body: CREATED },
    ]);
    const created = await client.createTask({ prompt: 'Echo "x"' });
    expect(created.id).toBe('task_abc');
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
    // Retry-After, plus at most jitter × initialDelayMs (0.5 × 10 ms here)
    expect(retries.map((r) => [r.retry, r.error.code])).toEqual([[1, 'rate_limit_exceeded']]);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(1005);
    expect(seen[0]?.headers['idempotency-key']).toMatch(UUID);
    expect(seen[1]?.headers['idempotency-key']).toBe(seen[0]?.headers['idempotency-key']);
    expect(seen[1]?.body).toBe(seen[0]?.body);
  });

  it('retries 503 twice with exponential backoff and sends the same Idempotency-Key on all three attempts', async () => {
    const { client, seen, retries } = await setup([
      { status: 503, body: envelope('temporarily_unavailable') },
      { status: 503, body: envelope('temporarily_unavailable') },
      { status: 201, body: CREATED },
    ]);
    await expect(client.createTask({ prompt: 'Echo "x"' })).resolves.toEqual(CREATED);
    expect(seen).toHaveLength(3);
    const keys = new Set(seen.map((s) => s.headers['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(UUID);
    // initialDelayMs 10, multiplier 2, jitter 0.5: retry 1 in [5, 10], retry 2 in [10, 20]
    expect(retries.map((r) => r.retry)).toEqual([1, 2]);
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(5);
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(10);
    expect(retries[1]!.delayMs).toBeGreaterThanOrEqual(10);
    expect(retries[1]!.delayMs).toBeLessThanOrEqual(20);
  });

  it('does not retry a 400: one request, InvalidRequestError with code, status, message and request id', async () => {
    const { client, seen, retries } = await setup([{ status: 400, body: envelope('invalid_request', 'body: unknown field "x"') }]);
    const err = await caught(client.createTask({ prompt: 'p' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', message: 'body: unknown field "x"', requestId: 'req_0' });
    expect(seen).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('retries 500, 502 and 504, a closed connection and a timeout, each with the same Idempotency-Key', async () => {
    const { client, seen, retries } = await setup(
      [
        { status: 500, body: envelope('internal_error') },
        { status: 502, body: '<html>bad gateway</html>' },
        { destroy: true },
        { status: 504 },
        // Far past the client timeout; the timeout itself is generous so a loaded machine
        // does not turn the quick answers above into timeouts too.
        { delayMs: 4000, status: 201, body: CREATED },
        { status: 201, body: CREATED },
      ],
      { maxRetries: 5, timeoutMs: 1500 },
    );
    await expect(client.createTask({ prompt: 'p' })).resolves.toEqual(CREATED);
    expect(seen).toHaveLength(6);
    expect(new Set(seen.map((s) => s.headers['idempotency-key'])).size).toBe(1);
    expect(retries.map((r) => r.error.code)).toEqual(['internal_error', 'http_502', 'connection_error', 'http_504', 'timeout']);
    expect(retries.map((r) => r.error.constructor.name)).toEqual([
      'ServerError',
      'ServerError',
      'ConnectionError',
      'ServerError',
      'ConnectionError',
    ]);
  });

  it('retries 409 idempotency_key_in_progress (the first attempt is still running) but no other 409', async () => {
    const { client, seen } = await setup([
      { status: 409, body: envelope('idempotency_key_in_progress'), headers: { 'retry-after': '0' } },
      { status: 201, body: CREATED },
    ]);
    await expect(client.createTask({ prompt: 'p' })).resolves.toEqual(CREATED);
    expect(seen).toHaveLength(2);

    const other = await setup([{ status: 409, body: envelope('task_already_complete') }]);
    const err = await caught(other.client.cancelTask('task_1'));
    expect(err).toBeInstanceOf(ConflictError);
    expect(err.code).toBe('task_already_complete');
    expect(other.seen).toHaveLength(1);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    const { client, seen } = await setup(
      [{ status: 503, body: envelope('temporarily_unavailable', 'busy'), headers: { 'retry-after': '0' } }],
      { maxRetries: 2 },
    );
    const err = await caught(client.getTask('task_1'));
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 503, code: 'temporarily_unavailable', message: 'busy', requestId: 'req_2', retryAfterSeconds: 0 });
    expect(seen).toHaveLength(3);
    const none = await setup([{ status: 500, body: envelope('internal_error') }], { maxRetries: 0 });
    await caught(none.client.getTask('task_1'));
    expect(none.seen).toHaveLength(1);
  });

  it('does not wait for a Retry-After longer than maxRetryAfterMs: RateLimitError at once', async () => {
    const { client, seen } = await setup(
      [{ status: 429, body: envelope('rate_limit_exceeded', 'slow down'), headers: { 'retry-after': '30' } }],
      {
        retry: { maxRetryAfterMs: 5_000 },
      },
    );
    const err = await caught(client.listTasks());
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: 30 });
    expect(seen).toHaveLength(1);
  });

  it('stops retrying when the caller aborts, rejecting with the abort reason', async () => {
    const { client, seen } = await setup([{ status: 503, body: envelope('temporarily_unavailable') }], {
      retry: { initialDelayMs: 5_000 },
    });
    const ctl = new AbortController();
    const p = client.getTask('task_1', { signal: ctl.signal });
    setTimeout(() => ctl.abort(), 100);
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(1);
  });
});

describe('TaskServiceClient: typed errors', () => {
  it.each([
    [401, 'invalid_api_key', AuthenticationError],
    [401, 'missing_api_key', AuthenticationError],
    [404, 'task_not_found', NotFoundError],
    [409, 'task_already_complete', ConflictError],
    [422, 'prompt_too_long', InvalidRequestError],
    [413, 'request_too_large', InvalidRequestError],
  ])('maps %i %s to %p, with the request id', async (status, code, cls) => {
    const { client, seen } = await setup([{ status, body: envelope(code, `because ${code}`) }]);
    const err = await caught(client.getTask('task_1'));
    expect(err).toBeInstanceOf(cls);
    expect(err).toBeInstanceOf(TaskServiceError);
    expect(err).toMatchObject({ status, code, message: `because ${code}`, requestId: 'req_0' });
    expect(err.toJSON()).toEqual({ error: { code, message: `because ${code}`, status, request_id: 'req_0' } });
    expect(seen).toHaveLength(1);
  });

  it('keeps the suggestion and what is missing of a refused create', async () => {
    const error = {
      code: 'missing_input',
      message: 'no subject',
      suggestion: 'Add a subject in quotes',
      missing: ['step 1 (gmail.send_email): subject'],
    };
    const { client } = await setup([{ status: 422, body: { error } }]);
    const err = await caught(client.createTask({ prompt: 'email bob@x.io' }));
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 422, code: 'missing_input', suggestion: 'Add a subject in quotes', missing: error.missing });
    expect(err.toJSON()).toEqual({ error: { ...error, status: 422, request_id: 'req_0' } });
  });

  it('reports a refused connection as ConnectionError after the retries', async () => {
    const { server, client } = await setup([{}], { maxRetries: 1 });
    await server.close();
    const err = await caught(client.getTask('task_1'));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.code).toBe('connection_error');
    expect(err.status).toBeUndefined();
    expect(err.message).toMatch(/ECONNREFUSED/);
  });
});

describe('TaskServiceClient: waitForTask', () => {
  const task = (status: string, extra: object = {}) => ({ body: { ...CREATED, status, ...extra } });

  it('polls with growing pauses until the task ends and returns it', async () => {
    const { client, seen } = await setup([
      task('pending'),
      task('running'),
      task('running'),
      task('complete', { result: { text: 'x' }, completed_at: 'y' }),
    ]);
    const polled: string[] = [];
    const done = await client.waitForTask('task_abc', { initialIntervalMs: 20, multiplier: 2, onPoll: (t) => polled.push(t.status) });
    expect(done).toMatchObject({ status: 'complete', result: { text: 'x' } });
    expect(polled).toEqual(['pending', 'running', 'running', 'complete']);
    const gaps = seen.slice(1).map((s, i) => s.at - seen[i]!.at);
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
  });

  it('returns failed and cancelled tasks instead of throwing', async () => {
    const failed = await setup([task('failed', { error: { code: 'rate_limited', message: 'm', tool: 'github', recoverable: true } })]);
    await expect(failed.client.waitForTask('task_abc')).resolves.toMatchObject({ status: 'failed', error: { code: 'rate_limited' } });
    const cancelled = await setup([task('cancelled')]);
    await expect(cancelled.client.waitForTask('task_abc')).resolves.toMatchObject({ status: 'cancelled' });
  });

  it('throws WaitTimeoutError carrying the last state when the task does not end in time', async () => {
    const { client } = await setup([task('waiting')]);
    const err = await caught(client.waitForTask('task_abc', { timeoutMs: 150, initialIntervalMs: 20 }));
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err.code).toBe('wait_timeout');
    expect((err as WaitTimeoutError).task?.status).toBe('waiting');
  });

  it('stops when its signal aborts', async () => {
    const { client } = await setup([task('running')]);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    await expect(client.waitForTask('task_abc', { signal: ctl.signal, initialIntervalMs: 20 })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });

  it('propagates a 404 at once', async () => {
    const { client } = await setup([{ status: 404, body: envelope('task_not_found') }]);
    expect(await caught(client.waitForTask('task_nope'))).toBeInstanceOf(NotFoundError);
  });
});

describe('TaskServiceClient: configuration', () => {
  const saved = { key: process.env['SERVICE_API_KEY'], url: process.env['SERVICE_BASE_URL'] };
  afterEach(() => {
    for (const [name, v] of [
      ['SERVICE_API_KEY', saved.key],
      ['SERVICE_BASE_URL', saved.url],
    ] as const) {
      if (v === undefined) delete process.env[name];
      else process.env[name] = v;
    }
  });

  it('reads SERVICE_API_KEY and SERVICE_BASE_URL from the environment', async () => {
    const server = await fakeServer([{ body: CREATED }]);
    servers.push(server);
    process.env['SERVICE_API_KEY'] = 'pk_test_fromenv';
    process.env['SERVICE_BASE_URL'] = `${server.baseUrl}/`;
    const client = new TaskServiceClient();
    expect(client.baseUrl).toBe(server.baseUrl);
    await client.getTask('task_abc');
    expect(server.seen[0]?.headers['authorization']).toBe('Bearer pk_test_fromenv');
  });

  it('requires an API key and defaults the base URL', () => {
    delete process.env['SERVICE_API_KEY'];
    delete process.env['SERVICE_BASE_URL'];
    expect(() => new TaskServiceClient()).toThrow(AuthenticationError);
    expect(() => new TaskServiceClient()).toThrow(expect.objectContaining({ code: 'missing_api_key' }) as Error);
    expect(new TaskServiceClient({ apiKey: 'pk_test_x' }).baseUrl).toBe(DEFAULT_BASE_URL);
    expect(DEFAULT_BASE_URL).toBe('https://api.tes.example.com/v1');
    expect(() => new TaskServiceClient({ apiKey: 'k', baseUrl: 'ftp://x' })).toThrow(TypeError);
    expect(() => new TaskServiceClient({ apiKey: 'k', maxRetries: -1 })).toThrow(TypeError);
    expect(() => new TaskServiceClient({ apiKey: 'k', timeoutMs: 0 })).toThrow(TypeError);
  });

  it('uses node:http when insecure/ca/agent is set, with the same wire behaviour', async () => {
    const { client, seen } = await setup([{ status: 503 }, { status: 201, body: CREATED }], { insecure: true });
    await expect(client.createTask({ prompt: 'p' })).resolves.toEqual(CREATED);
    expect(seen).toHaveLength(2);
    expect(seen[1]?.headers['idempotency-key']).toBe(seen[0]?.headers['idempotency-key']);
    expect(seen[0]?.headers['content-length']).toBe(String(Buffer.byteLength('{"prompt":"p"}')));
    client.close();
  });

  it('keeps SDK_VERSION equal to package.json', () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string; dependencies?: object };
    expect(SDK_VERSION).toBe(pkg.version);
    expect(pkg.dependencies ?? {}).toEqual({});
  });
});
