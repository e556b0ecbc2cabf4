import { request, waitFor, type HttpResult, type Stack } from '@tes/testing';
import { ISO_UTC, OpenApi, bearer, newAccount, startApiStack, type Account } from './conformance.support.js';

/**
 * Task states that need time to look at: with the executor stopped, tasks stay
 * `running`, and an account at its concurrent-task limit (set to 1 here) gets
 * `pending` tasks that start FIFO when a running one ends (brief: how a task enters
 * pending). Also the cancel answer, and 503 when a back end does not answer.
 * `waiting`, and its cancel, are in conformance.connections.e2e.test.ts (they need an OAuth
 * provider in the vault).
 */
describe('public API conformance: running, pending, cancel', () => {
  let stack: Stack;
  let api: OpenApi;
  let acct: Account;
  const ids: Record<'a' | 'b' | 'c' | 'd', string> = { a: '', b: '', c: '', d: '' };

  const auth = () => bearer(acct.api_keys.test);
  const url = (p: string) => `${stack.baseUrl}${p}`;
  const create = async (prompt: string) =>
    api.check('POST', '/tasks', await request('POST', url('/tasks'), { headers: auth(), body: { prompt, user_id: 'user_life' } }));
  const get = async (id: string) => api.check('GET', '/tasks/{task_id}', await request('GET', url(`/tasks/${id}`), { headers: auth() }));
  const cancel = async (id: string) =>
    api.check('POST', '/tasks/{task_id}/cancel', await request('POST', url(`/tasks/${id}/cancel`), { headers: auth() }));
  const list = async (q: string) => api.check('GET', '/tasks', await request('GET', url(`/tasks${q}`), { headers: auth() }));
  const waitStatus = (id: string, status: string): Promise<HttpResult> =>
    waitFor(
      async () => {
        const r = await get(id);
        return r.json?.status === status ? r : undefined;
      },
      { what: `task ${id} ${status}`, timeoutMs: 20_000 },
    );

  beforeAll(async () => {
    stack = await startApiStack({ gateway: { REQUEST_TIMEOUT_MS: '1500' } });
    api = await OpenApi.fetch(stack);
    acct = await newAccount(stack, { rpm: 100_000, concurrency: 1 });
    await stack.stop('executor');
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
  });

  it('answers running under the concurrent-task limit and pending over it; get shows neither completed_at nor result', async () => {
    const a = await create('Echo "first"');
    expect(a.status).toBe(201);
    expect(a.json.status).toBe('running');
    for (const k of ['b', 'c', 'd'] as const) {
      const r = await create(`Echo "${k}"`);
      expect(r.status).toBe(201);
      expect(Object.keys(r.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool']);
      expect(r.json.status).toBe('pending');
      ids[k] = r.json.id;
    }
    ids.a = a.json.id;
    const running = await get(ids.a);
    expect(Object.keys(running.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool']);
    expect(running.json.status).toBe('running');
    const pending = await get(ids.b);
    expect(Object.keys(pending.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool']);
    expect(pending.json.status).toBe('pending');
  });

  it('lists pending and running items with id, status, tool and created_at only, newest first', async () => {
    const p = await list('?status=pending');
    expect(p.json.data.map((t: { id: string }) => t.id)).toEqual([ids.d, ids.c, ids.b]);
    for (const item of p.json.data) expect(Object.keys(item).sort()).toEqual(['created_at', 'id', 'status', 'tool']);
    const r = await list('?status=running');
    expect(r.json.data.map((t: { id: string }) => t.id)).toEqual([ids.a]);
  });

  it('answers 503 temporarily_unavailable with Retry-After when the executor does not answer a trace', async () => {
    const r = api.check('GET', '/tasks/{task_id}/trace', await request('GET', url(`/tasks/${ids.a}/trace`), { headers: auth() }));
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('temporarily_unavailable');
    expect(r.headers['retry-after']).toBe('1');
  });

  it('cancels a pending task: the answer is exactly id, status cancelled and cancelled_at; get shows cancelled', async () => {
    const r = await cancel(ids.c);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['cancelled_at', 'id', 'status']);
    expect(r.json).toMatchObject({ id: ids.c, status: 'cancelled' });
    expect(r.json.cancelled_at).toMatch(ISO_UTC);
    const g = await get(ids.c);
    expect(g.json.status).toBe('cancelled');
    expect(Object.keys(g.json).sort()).toEqual(['created_at', 'id', 'metadata', 'status', 'tool']);
    const again = await cancel(ids.c);
    expect([again.status, again.json.error.code]).toEqual([409, 'task_already_complete']);
  });

  it('cancels a running task and starts the oldest pending one (FIFO), leaving the younger pending', async () => {
    const r = await cancel(ids.a);
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('cancelled');
    await waitStatus(ids.b, 'running');
    expect((await get(ids.d)).json.status).toBe('pending');
  });

  it('starts the next pending task when the running one ends; a cancelled task never completes afterwards', async () => {
    await stack.start('executor');
    const b = await waitStatus(ids.b, 'complete');
    const d = await waitStatus(ids.d, 'complete');
    expect(b.json.result).toEqual({ text: 'b' });
    expect(d.json.result).toEqual({ text: 'd' });
    // Concurrency 1: d could start only after b ended.
    expect(Date.parse(d.json.completed_at)).toBeGreaterThanOrEqual(Date.parse(b.json.completed_at));
    // a's step was queued before it was cancelled; the executor ran it on restart, the late result changed nothing.
    await waitFor(async () => (await request('GET', url(`/tasks/${ids.a}/trace`), { headers: auth() })).status === 200, {
      what: 'executor up',
    });
    expect((await get(ids.a)).json.status).toBe('cancelled');
    expect((await get(ids.c)).json.status).toBe('cancelled');
    const items = (await list('?user_id=user_life&limit=10')).json.data as { id: string; status: string; completed_at?: string }[];
    expect(items.map((t) => [t.id, t.status])).toEqual([
      [ids.d, 'complete'],
      [ids.c, 'cancelled'],
      [ids.b, 'complete'],
      [ids.a, 'cancelled'],
    ]);
    for (const t of items) expect('completed_at' in t).toBe(t.status === 'complete');
  });
});
