import { request, type Stack } from '@tes/testing';
import { OpenApi, bearer, newAccount, startApiStack, type Account } from './conformance.support.js';

/** `{a: {a: … {x: 1}}}` with `levels` objects around `{x: 1}`. */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = { x: 1 };
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

/** A create body whose metadata is nested(levels), written as text: JSON.stringify overflows this process's stack at 10,000 levels. */
function deepBody(levels: number): string {
  return `{"prompt":"Echo \\"storable\\"","metadata":${'{"a":'.repeat(levels)}{"x":1}${'}'.repeat(levels)}}`;
}

/**
 * Issue 20, finding 5: input the database cannot store (a NUL character, a key starting with `$`
 * or holding `.`, very deep nesting) used to be accepted, fail at the orchestrator's insert, be
 * retried five times and come back 503 "retry shortly" after 5 s, with the task lost. The gateway
 * now refuses it with 400 invalid_request naming the field, before anything is sent.
 */
describe('input the database cannot store', () => {
  let stack: Stack;
  let api: OpenApi;
  let acct: Account;

  const create = async (body: object | string) => {
    const started = performance.now();
    const res = api.check('POST', '/tasks', await request('POST', `${stack.baseUrl}/tasks`, { headers: bearer(acct.api_keys.live), body }));
    return { ...res, ms: performance.now() - started };
  };
  const orchestratorLog = () => stack.procs.get('task-orchestrator')?.output() ?? '';

  beforeAll(async () => {
    stack = await startApiStack();
    api = await OpenApi.fetch(stack);
    acct = await newAccount(stack);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
  });

  it.each([
    ['a NUL in the prompt', { prompt: 'Echo "storable"\u0000' }, /^prompt: the value contains a NUL character/],
    ['a NUL in user_id', { prompt: 'Echo "storable"', user_id: 'u\u0000' }, /^user_id: the value contains a NUL character/],
    [
      'a metadata key starting with $',
      { prompt: 'Echo "storable"', metadata: { order: { $where: '1' } } },
      /^metadata\.order: the key "\$where" must not start with "\$"$/,
    ],
    [
      'a metadata key holding a dot',
      { prompt: 'Echo "storable"', metadata: { 'a.b': 1 } },
      /^metadata: the key "a\.b" must not contain "\."$/,
    ],
    ['metadata 1,000 levels deep', deepBody(1000), /^metadata(\.a){32}: nesting deeper than 32$/],
    ['metadata 10,000 levels deep', deepBody(10_000), /^metadata(\.a){32}: nesting deeper than 32$/],
    [
      'a metadata string over 4096 characters',
      { prompt: 'Echo "storable"', metadata: { note: 'x'.repeat(4097) } },
      /^metadata\.note: the value is longer than 4096/,
    ],
  ])('answers 400 invalid_request at once for %s, naming the field', async (_name, body, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    const error = (res.json as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(message);
    expect(res.ms).toBeLessThan(1000);
  });

  it('sends none of them to the orchestrator: nothing failed, retried or dead-lettered there', () => {
    expect(orchestratorLog()).not.toMatch(/handler failed|dead-lettered/);
  });

  it('stores what is allowed: metadata 32 deep, other control characters, keys with $ inside', async () => {
    const metadata = { deep: nested(30), text: 'tab\tbell\u0007', price$: 1, list: [{ a: [1, 'two'] }] };
    const res = await create({ prompt: 'Echo "storable"', metadata });
    expect(res.status).toBe(201);
    const id = (res.json as { id: string }).id;
    const got = await request('GET', `${stack.baseUrl}/tasks/${id}`, { headers: bearer(acct.api_keys.live) });
    expect(got.status).toBe(200);
    expect((got.json as { metadata: unknown }).metadata).toEqual(metadata);
  });

  it('refuses a custom tool whose input schema the database cannot store, naming the field', async () => {
    const manifest = {
      name: 'crm_tool',
      description: 'A CRM',
      base_url: 'https://crm.example.com',
      actions: [
        {
          name: 'find',
          description: 'Find a contact',
          method: 'GET',
          path: '/contacts',
          input_schema: { type: 'object', properties: { q: { $ref: '#/$defs/q' } }, $defs: { q: { type: 'string' } } },
        },
      ],
    };
    const res = api.check(
      'POST',
      '/tools',
      await request('POST', `${stack.baseUrl}/tools`, { headers: bearer(acct.api_keys.live), body: manifest }),
    );
    expect(res.status).toBe(400);
    expect((res.json as { error: { code: string; message: string } }).error).toEqual({
      code: 'invalid_request',
      message: 'actions.0.input_schema.properties.q: the key "$ref" must not start with "$"',
    });
  });
});
