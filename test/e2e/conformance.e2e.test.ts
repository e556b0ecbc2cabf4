import { request, waitFor, type HttpResult, type Stack } from '@tes/testing';
import { ISO_UTC, OpenApi, bearer, newAccount, startApiStack, type Account } from './conformance.support.js';

/**
 * Conformance of the public API to the spec (sections 2, 4, 5, 7, 8) and to its own
 * OpenAPI document, through real HTTPS against the five services running as processes:
 * the fields of every answer, every validation rule, every error code and header.
 * States that need a stalled executor (running, pending, cancel) are in
 * conformance.lifecycle; rate limits, idempotency and revocation in conformance.limits.
 */
describe('public API conformance: fields, validation, errors', () => {
  let stack: Stack;
  let api: OpenApi;
  let acct: Account;
  let complete: HttpResult;

  const test = () => bearer(acct.api_keys.test);
  const live = () => bearer(acct.api_keys.live);
  const url = (p: string) => `${stack.baseUrl}${p}`;
  const create = async (body: unknown, headers: Record<string, string> = test()) =>
    api.check('POST', '/tasks', await request('POST', url('/tasks'), { headers, body: body as object }));
  const get = async (id: string, headers: Record<string, string> = test()) =>
    api.check('GET', '/tasks/{task_id}', await request('GET', url(`/tasks/${id}`), { headers }));
  const list = async (query = '', headers: Record<string, string> = test()) =>
    api.check('GET', '/tasks', await request('GET', url(`/tasks${query}`), { headers }));
  const waitStatus = (id: string, status: string) =>
    waitFor(
      async () => {
        const r = await get(id);
        return r.json?.status === status ? r : undefined;
      },
      { what: `task ${id} ${status}`, timeoutMs: 20_000 },
    );

  beforeAll(async () => {
    stack = await startApiStack();
    api = await OpenApi.fetch(stack);
    acct = await newAccount(stack, { rpm: 100_000 });
    const created = await create({
      prompt: 'Echo "hello conformance"',
      user_id: 'user_conf',
      mode: 'live',
      metadata: { ref: 'c-1', n: 2 },
    });
    complete = await waitStatus(created.json.id, 'complete');
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
  });

  describe('the task object (spec 2.1)', () => {
    it('create answers 201 with exactly id, status, tool, created_at and metadata; user_id and mode are not echoed', async () => {
      const r = await create({
        prompt: 'Echo "fields"',
        user_id: 'user_fields',
        mode: 'live',
        metadata: { order: 'A-1', nested: { ok: true } },
      });
      expect(r.status).toBe(201);
      expect(Object.keys(r.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool']);
      expect(r.json.id).toMatch(/^task_[A-Za-z0-9]+$/);
      expect(r.json.status).toBe('running');
      expect(r.json.tool).toBe('text');
      expect(r.json.created_at).toMatch(ISO_UTC);
      expect(r.json.metadata).toEqual({ order: 'A-1', nested: { ok: true } });
      expect(r.headers['content-type']).toMatch(/^application\/json/);
    });

    it('defaults metadata to {} on create and get', async () => {
      const r = await create({ prompt: 'Echo "no metadata"' });
      expect(r.json.metadata).toEqual({});
      expect((await get(r.json.id)).json.metadata).toEqual({});
    });

    it('get of a complete task has completed_at and result, no error, failed_at, cancelled_at or user_id', () => {
      expect(Object.keys(complete.json).sort()).toEqual(['completed_at', 'created_at', 'id', 'metadata', 'result', 'status', 'tool']);
      expect(complete.json).toMatchObject({
        status: 'complete',
        tool: 'text',
        result: { text: 'hello conformance' },
        metadata: { ref: 'c-1', n: 2 },
      });
      expect(complete.json.completed_at).toMatch(ISO_UTC);
      expect(Date.parse(complete.json.completed_at)).toBeGreaterThanOrEqual(Date.parse(complete.json.created_at));
    });

    it('mode "test" previews the tool and steps and runs nothing; the task ends complete with result.preview', async () => {
      const r = await create({ prompt: 'Uppercase "preview me"', mode: 'test' });
      expect(r.status).toBe(201);
      expect(r.json).not.toHaveProperty('mode');
      const done = await waitStatus(r.json.id, 'complete');
      expect(done.json.result).toMatchObject({
        preview: { tool: 'text', steps: [{ tool: 'text', action: 'uppercase', side_effect: 'read' }] },
      });
      const trace = api.check('GET', '/tasks/{task_id}/trace', await request('GET', url(`/tasks/${r.json.id}/trace`), { headers: test() }));
      // Nothing ran: the trace shows the planned steps and which planner made them.
      expect(trace.json).toEqual({
        task_id: r.json.id,
        steps: [],
        total_duration_ms: 0,
        planner: { name: 'rules' },
        planned_steps: [{ tool: 'text', action: 'uppercase', side_effect: 'read', input: { text: 'preview me' }, missing: [] }],
      });
    });

    it('get of a failed task has failed_at and error {code, message, tool, recoverable}, no result or completed_at; list items omit error', async () => {
      // A loopback URL: refused by the executor (SSRF guard, or no such action yet): the task fails.
      const r = await create({ prompt: 'Fetch http://127.0.0.1:9/conformance', user_id: 'user_failed' });
      expect(r.status).toBe(201);
      const failed = await waitStatus(r.json.id, 'failed');
      expect(Object.keys(failed.json).sort()).toEqual(['created_at', 'error', 'failed_at', 'id', 'metadata', 'status', 'tool']);
      expect(failed.json.failed_at).toMatch(ISO_UTC);
      expect(failed.json.error).toEqual(
        expect.objectContaining({
          code: expect.any(String),
          message: expect.any(String),
          tool: expect.any(String),
          recoverable: expect.any(Boolean),
        }),
      );
      expect(Object.keys(failed.json.error).every((k) => ['code', 'message', 'tool', 'recoverable', 'suggestion'].includes(k))).toBe(true);
      const item = (await list('?user_id=user_failed')).json.data[0];
      expect(Object.keys(item).sort()).toEqual(['created_at', 'id', 'status', 'tool']);
      expect(item.status).toBe('failed');
      const cancel = api.check(
        'POST',
        '/tasks/{task_id}/cancel',
        await request('POST', url(`/tasks/${r.json.id}/cancel`), { headers: test() }),
      );
      expect([cancel.status, cancel.json.error.code]).toEqual([409, 'task_already_complete']);
    });

    it('the trace of a complete task lists its steps in order (spec 2.3)', async () => {
      const r = api.check(
        'GET',
        '/tasks/{task_id}/trace',
        await request('GET', url(`/tasks/${complete.json.id}/trace`), { headers: test() }),
      );
      expect(r.status).toBe(200);
      expect(Object.keys(r.json).sort()).toEqual(['planner', 'steps', 'task_id', 'total_duration_ms']);
      expect(r.json.planner).toEqual({ name: 'rules' });
      expect(r.json.task_id).toBe(complete.json.id);
      expect(r.json.steps).toHaveLength(1);
      expect(Object.keys(r.json.steps[0]).sort()).toEqual(['action', 'duration_ms', 'status', 'tool']);
      expect(r.json.steps[0]).toMatchObject({ tool: 'text', action: 'echo', status: 'complete' });
      expect(Number.isInteger(r.json.total_duration_ms)).toBe(true);
    });
  });

  describe('list (spec 4.3)', () => {
    let mine: string[];
    beforeAll(async () => {
      mine = [];
      for (let i = 0; i < 3; i++) mine.push((await create({ prompt: `Echo "page ${i}"`, user_id: 'user_pager' })).json.id);
      for (const id of mine) await waitStatus(id, 'complete');
    });

    it('answers the envelope {data, has_more}; items carry only id, status, tool, created_at and completed_at', async () => {
      const r = await list();
      expect(Object.keys(r.json).sort()).toEqual(['data', 'has_more']);
      expect(r.json.data.length).toBeGreaterThan(0);
      for (const item of r.json.data) {
        const keys = Object.keys(item).sort();
        expect(keys).toEqual(
          item.status === 'complete' ? ['completed_at', 'created_at', 'id', 'status', 'tool'] : ['created_at', 'id', 'status', 'tool'],
        );
      }
    });

    it('filters by user_id and status, pages with limit and offset, newest first, has_more on every page', async () => {
      const p1 = await list('?user_id=user_pager&limit=2');
      expect(p1.json.data.map((t: { id: string }) => t.id)).toEqual([mine[2], mine[1]]);
      expect(p1.json.has_more).toBe(true);
      const p2 = await list('?user_id=user_pager&limit=2&offset=2');
      expect(p2.json.data.map((t: { id: string }) => t.id)).toEqual([mine[0]]);
      expect(p2.json.has_more).toBe(false);
      const done = await list('?user_id=user_pager&status=complete&limit=100');
      expect(done.json.data).toHaveLength(3);
      expect((await list('?user_id=user_pager&status=running')).json.data).toEqual([]);
      const beyond = await list('?user_id=user_pager&offset=3');
      expect(beyond.json).toEqual({ data: [], has_more: false });
    });

    it('defaults limit to 20', async () => {
      for (let i = 0; i < 21; i++) await create({ prompt: `Echo "bulk ${i}"`, user_id: 'user_bulk' });
      const r = await list('?user_id=user_bulk');
      expect(r.json.data).toHaveLength(20);
      expect(r.json.has_more).toBe(true);
    });

    it.each([
      ['limit=100', 200, ''],
      ['limit=1', 200, ''],
      ['limit=101', 400, 'limit'],
      ['limit=0', 400, 'limit'],
      ['limit=-5', 400, 'limit'],
      ['limit=ten', 400, 'limit'],
      ['limit=2.5', 400, 'limit'],
      ['offset=0', 200, ''],
      ['offset=-1', 400, 'offset'],
      ['offset=x', 400, 'offset'],
      ['status=running', 200, ''],
      ['status=done', 400, 'status'],
      ['status=Running', 400, 'status'],
      ['limit=1&limit=2', 400, 'limit'],
      ['sort=asc', 400, 'sort'],
    ])('GET /tasks?%s answers %i naming the parameter', async (query, status, field) => {
      const r = await list(`?${query}`);
      expect(r.status).toBe(status);
      if (status === 400) {
        expect(r.json.error.code).toBe('invalid_request');
        expect(r.json.error.message).toContain(field);
      }
    });
  });

  describe('create validation (spec 4.1, 7.2, 8.1)', () => {
    it('accepts a prompt of exactly 10,000 characters and refuses 10,001 with 422 prompt_too_long', async () => {
      const ok = await create({ prompt: `echo ${'a'.repeat(9995)}` });
      expect(ok.status).toBe(201);
      const over = await create({ prompt: `echo ${'a'.repeat(9996)}` });
      expect(over.status).toBe(422);
      expect(over.json).toEqual({ error: { code: 'prompt_too_long', message: 'prompt has 10001 characters; the maximum is 10000' } });
    });

    it('counts an astral-plane emoji as one character (Unicode code points, not UTF-16 units)', async () => {
      const emoji = '😀'; // U+1F600: one code point, two UTF-16 units
      const ok = await create({ prompt: `echo ${emoji.repeat(9995)}` });
      expect(`echo ${emoji.repeat(9995)}`.length).toBe(19_995);
      expect(ok.status).toBe(201);
      const over = await create({ prompt: `echo ${emoji.repeat(9996)}` });
      expect(over.status).toBe(422);
      expect(over.json.error.code).toBe('prompt_too_long');
    });

    it.each<[string, unknown, RegExp]>([
      ['prompt missing', {}, /prompt is required/],
      ['prompt not a string', { prompt: 42 }, /prompt must be string/],
      ['prompt empty', { prompt: '' }, /prompt/],
      ['metadata not an object', { prompt: 'echo x', metadata: 'tag' }, /metadata must be object/],
      ['metadata an array', { prompt: 'echo x', metadata: ['a'] }, /metadata must be object/],
      ['user_id not a string', { prompt: 'echo x', user_id: 7 }, /user_id/],
      ['mode unknown', { prompt: 'echo x', mode: 'dry-run' }, /mode must be one of: live, test/],
      ['unknown field', { prompt: 'echo x', priority: 'high' }, /priority is not an allowed field/],
      ['body an array', [{ prompt: 'echo x' }], /JSON object/],
      ['body a string', 'echo x', /JSON object/],
    ])('400 invalid_request naming the field: %s', async (_what, body, message) => {
      const r = await create(typeof body === 'string' ? JSON.stringify(body) : body);
      expect(r.status).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
      expect(r.json.error.message).toMatch(message);
    });

    it('answers 400 for malformed JSON, a wrong Content-Type and an empty body', async () => {
      const malformed = api.check(
        'POST',
        '/tasks',
        await request('POST', url('/tasks'), { headers: test(), body: '{"prompt": "echo x",' }),
      );
      expect(malformed.json).toEqual({ error: { code: 'invalid_request', message: 'Request body is not valid JSON' } });
      const text = api.check(
        'POST',
        '/tasks',
        await request('POST', url('/tasks'), { headers: { ...test(), 'content-type': 'text/plain' }, body: '{"prompt":"echo x"}' }),
      );
      expect(text.json).toEqual({ error: { code: 'invalid_request', message: 'Content-Type must be application/json' } });
      const form = api.check(
        'POST',
        '/tasks',
        await request('POST', url('/tasks'), {
          headers: { ...test(), 'content-type': 'application/x-www-form-urlencoded' },
          body: 'prompt=echo',
        }),
      );
      expect(form.status).toBe(400);
      const empty = api.check('POST', '/tasks', await request('POST', url('/tasks'), { headers: test() }));
      expect(empty.status).toBe(400);
      expect(empty.json.error.code).toBe('invalid_request');
    });

    it('answers 413 request_too_large in the envelope for an oversized body', async () => {
      const r = api.check(
        'POST',
        '/tasks',
        await request('POST', url('/tasks'), { headers: test(), body: { prompt: 'echo x', metadata: { blob: 'x'.repeat(300_000) } } }),
      );
      expect(r.status).toBe(413);
      expect(r.json.error.code).toBe('request_too_large');
    });

    it('answers 422 no_matching_tool when no tool fits the prompt', async () => {
      const r = await create({ prompt: 'qwzx vbnmop plokij' });
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe('no_matching_tool');
      expect(r.json.error.suggestion).toEqual(expect.any(String));
    });
  });

  describe('errors and headers (spec 5, 7)', () => {
    it('answers 401 missing_api_key without an Authorization header, on every operation', async () => {
      for (const [method, path, template] of [
        ['POST', '/tasks', '/tasks'],
        ['GET', '/tasks', '/tasks'],
        ['GET', '/tasks/task_x', '/tasks/{task_id}'],
        ['POST', '/tasks/task_x/cancel', '/tasks/{task_id}/cancel'],
        ['GET', '/tasks/task_x/trace', '/tasks/{task_id}/trace'],
        ['GET', '/users/u1/connections', '/users/{user_id}/connections'],
        ['DELETE', '/users/u1/connections/github', '/users/{user_id}/connections/{service}'],
      ] as const) {
        const r = api.check(method, template, await request(method, url(path)));
        expect([method, path, r.status, r.json]).toEqual([
          method,
          path,
          401,
          { error: { code: 'missing_api_key', message: expect.any(String) } },
        ]);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });

    it.each([
      ['an unknown well-formed key', () => `Bearer pk_test_${'A'.repeat(32)}`],
      ['a malformed key', () => 'Bearer pk_test_short'],
      ['an unknown environment prefix', () => `Bearer pk_prod_${'A'.repeat(32)}`],
      ['another scheme', () => `Basic ${Buffer.from('user:pass').toString('base64')}`],
      ['the key without the scheme', () => acct.api_keys.test],
      ['an empty bearer', () => 'Bearer '],
    ])('answers 401 invalid_api_key for %s', async (_what, header) => {
      const r = await list('', { authorization: header() });
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('invalid_api_key');
    });

    it('answers 404 task_not_found for an unknown task on get, cancel and trace', async () => {
      for (const [method, path, template] of [
        ['GET', '/tasks/task_doesnotexist', '/tasks/{task_id}'],
        ['POST', '/tasks/task_doesnotexist/cancel', '/tasks/{task_id}/cancel'],
        ['GET', '/tasks/task_doesnotexist/trace', '/tasks/{task_id}/trace'],
        ['GET', `/tasks/task_${'x'.repeat(300)}`, '/tasks/{task_id}'],
        ['GET', '/tasks/not-a-task-id', '/tasks/{task_id}'],
      ] as const) {
        const r = api.check(method, template, await request(method, url(path), { headers: test() }));
        expect([method, path, r.status, r.json.error.code]).toEqual([method, path, 404, 'task_not_found']);
      }
    });

    it('answers 409 task_already_complete when cancelling a complete task', async () => {
      const r = api.check(
        'POST',
        '/tasks/{task_id}/cancel',
        await request('POST', url(`/tasks/${complete.json.id}/cancel`), { headers: test() }),
      );
      expect(r.status).toBe(409);
      expect(r.json.error.code).toBe('task_already_complete');
      expect((await get(complete.json.id)).json.status).toBe('complete');
    });

    it('answers an unknown route 404 not_found and a wrong method 405 method_not_allowed with Allow, in the envelope', async () => {
      const nf = api.checkEnvelope(await request('GET', url('/nothing-here'), { headers: test() }));
      expect([nf.status, nf.json.error.code]).toEqual([404, 'not_found']);
      const root = api.checkEnvelope(await request('GET', `${stack.baseUrl.replace('/v1', '')}/`));
      expect(root.status).toBe(404);
      const upper = api.checkEnvelope(await request('GET', url('/TASKS'), { headers: test() }));
      expect(upper.status).toBe(404);
      const na = api.checkEnvelope(await request('DELETE', url(`/tasks/${complete.json.id}`), { headers: test() }));
      expect([na.status, na.json.error.code, na.headers['allow']]).toEqual([405, 'method_not_allowed', 'GET, HEAD']);
      const put = api.checkEnvelope(await request('PUT', url('/tasks'), { headers: test(), body: { prompt: 'echo x' } }));
      expect([put.status, put.headers['allow']]).toEqual([405, 'POST, GET, HEAD']);
      const getCancel = api.checkEnvelope(await request('GET', url(`/tasks/${complete.json.id}/cancel`), { headers: test() }));
      expect([getCancel.status, getCancel.headers['allow']]).toEqual([405, 'POST']);
    });

    it('puts X-Request-Id on every answer, echoing a sane one given by the caller', async () => {
      const answers = [
        await create({ prompt: 'echo id' }),
        await list(),
        await request('GET', url('/nope')),
        await request('GET', url('/tasks')),
        await request('POST', `${stack.plainHttpUrl}/tasks`),
        await request('GET', url('/openapi.json')),
      ];
      for (const a of answers) expect(a.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
      const echoed = await list('', { ...test(), 'x-request-id': 'client-trace-42' });
      expect(echoed.headers['x-request-id']).toBe('client-trace-42');
      const insane = await list('', { ...test(), 'x-request-id': 'bad id with spaces' });
      expect(insane.headers['x-request-id']).toMatch(/^req_/);
    });

    it('puts X-RateLimit-Limit, -Remaining and -Reset (Unix seconds) on every authenticated answer, errors included', async () => {
      const now = Date.now() / 1000;
      for (const r of [await list(), await get('task_nope'), await create({})]) {
        expect(Number(r.headers['x-ratelimit-limit'])).toBe(100_000);
        expect(Number(r.headers['x-ratelimit-remaining'])).toBeLessThan(100_000);
        const reset = Number(r.headers['x-ratelimit-reset']);
        expect(Number.isInteger(reset)).toBe(true);
        expect(reset % 60).toBe(0);
        expect(reset).toBeGreaterThan(now);
        expect(reset).toBeLessThanOrEqual(now + 61);
      }
    });
  });

  describe('environments and transport', () => {
    it('keeps test and live keys in separate worlds: a test task is 404 to the live key on get, cancel, trace and absent from its list', async () => {
      const t = await create({ prompt: 'echo only in test', user_id: 'user_sep' });
      for (const [method, path] of [
        ['GET', `/tasks/${t.json.id}`],
        ['POST', `/tasks/${t.json.id}/cancel`],
        ['GET', `/tasks/${t.json.id}/trace`],
      ] as const) {
        const r = await request(method, url(path), { headers: live() });
        expect([method, r.status, r.json.error.code]).toEqual([method, 404, 'task_not_found']);
      }
      expect((await list('?user_id=user_sep', live())).json.data).toEqual([]);
      expect((await list('?user_id=user_sep')).json.data.map((x: { id: string }) => x.id)).toEqual([t.json.id]);
      const l = await create({ prompt: 'echo only in live' }, live());
      expect(l.status).toBe(201);
      expect((await get(l.json.id)).status).toBe(404);
    });

    it('rejects plain HTTP with 403 https_required and touches nothing', async () => {
      const before = (await list('?limit=100&user_id=user_plain')).json.data.length;
      for (const [method, path] of [
        ['POST', '/tasks'],
        ['GET', '/tasks'],
        ['GET', '/openapi.json'],
        ['GET', '/nope'],
      ] as const) {
        const r = await request(method, `${stack.plainHttpUrl}${path}`, {
          headers: test(),
          ...(method === 'POST' ? { body: { prompt: 'echo plain', user_id: 'user_plain' } } : {}),
        });
        expect([method, path, r.status, r.json]).toEqual([
          method,
          path,
          403,
          { error: { code: 'https_required', message: expect.any(String) } },
        ]);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect((await list('?limit=100&user_id=user_plain')).json.data.length).toBe(before);
    });
  });

  describe("users' connections (brief: revocation through the API)", () => {
    it('lists a user without connections as an empty collection', async () => {
      const r = api.check(
        'GET',
        '/users/{user_id}/connections',
        await request('GET', url('/users/user_nobody/connections'), { headers: test() }),
      );
      expect(r.status).toBe(200);
      expect(r.json).toEqual({ data: [], has_more: false });
      expect(r.headers['x-ratelimit-limit']).toBeDefined();
    });

    it('answers 404 connection_not_found when revoking a connection that does not exist', async () => {
      const r = api.check(
        'DELETE',
        '/users/{user_id}/connections/{service}',
        await request('DELETE', url('/users/user_nobody/connections/github'), { headers: test() }),
      );
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('connection_not_found');
    });

    it('answers 400 naming user_id when it is too long', async () => {
      const r = api.check(
        'GET',
        '/users/{user_id}/connections',
        await request('GET', url(`/users/${'u'.repeat(300)}/connections`), { headers: test() }),
      );
      expect(r.status).toBe(400);
      expect(r.json.error.message).toMatch(/user_id/);
    });
  });

  it('serves a valid OpenAPI 3.1 document without a key, and every answer above conformed to it', async () => {
    const r = await request('GET', url('/openapi.json'));
    expect(r.status).toBe(200);
    expect(r.json.openapi).toBe('3.1.0');
    expect(Object.keys(r.json.paths).sort()).toEqual(
      [
        '/openapi.json',
        '/tasks',
        '/tasks/{task_id}',
        '/tasks/{task_id}/cancel',
        '/tasks/{task_id}/trace',
        '/tools',
        '/tools/{name}',
        '/users/{user_id}/connections',
        '/users/{user_id}/connections/{service}',
        '/users/{user_id}/settings_link',
      ].sort(),
    );
    for (const answer of [
      'POST /tasks 201',
      'POST /tasks 400',
      'POST /tasks 401',
      'POST /tasks 413',
      'POST /tasks 422',
      'GET /tasks 200',
      'GET /tasks 400',
      'GET /tasks 401',
      'GET /tasks/{task_id} 200',
      'GET /tasks/{task_id} 404',
      'POST /tasks/{task_id}/cancel 404',
      'POST /tasks/{task_id}/cancel 409',
      'GET /tasks/{task_id}/trace 200',
      'GET /tasks/{task_id}/trace 404',
      'GET /users/{user_id}/connections 200',
      'GET /users/{user_id}/connections 400',
      'DELETE /users/{user_id}/connections/{service} 404',
    ]) {
      expect(api.seen).toContain(answer);
    }
  });
});
