import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TaskServiceClient } from './client.js';
import { InvalidRequestError } from './errors.js';
import type { ToolAction, ToolManifest } from './types.js';

/**
 * Unknown fields of the typed calls. Each `@ts-expect-error` is enforced by `pnpm typecheck`
 * (tsconfig.check.json): the line must not compile. The same calls are then made as a JavaScript
 * caller would, and must be refused before any request reaches the server.
 */
let server: http.Server;
let requests = 0;
let client: TaskServiceClient;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url === '/v1/tools' ? TOOL : req.method === 'POST' ? CREATED : { data: [], has_more: false }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  client = new TaskServiceClient({ apiKey: 'pk_test_key', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});
beforeEach(() => {
  requests = 0;
});

const CREATED = { id: 'task_1', status: 'running', tool: 'text', created_at: '2026-01-01T00:00:00.000Z', metadata: {} };
const ACTION: ToolAction = { name: 'get', description: 'Get', method: 'GET', path: '/x', input_schema: { type: 'object' } };
const MANIFEST: ToolManifest = { name: 'acme_crm', description: 'CRM', base_url: 'https://crm.example/api', actions: [ACTION] };
const TOOL = { ...MANIFEST, created_at: '2026-01-01T00:00:00.000Z' };

async function refused(call: () => Promise<unknown>, message: string): Promise<void> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidRequestError);
  expect(err).toMatchObject({ code: 'invalid_request', status: undefined, message: expect.stringContaining(message) as string });
  expect(requests).toBe(0);
}

describe('unknown fields of typed calls', () => {
  it('createTask: a compile error, in a literal or a variable, and InvalidRequestError before any request', async () => {
    // @ts-expect-error priority is not a field of POST /tasks
    await refused(() => client.createTask({ prompt: 'x', priority: 1 }), 'createTask: priority is not an allowed field');
    const body = { prompt: 'x', priority: 1 };
    // @ts-expect-error also from a variable, where TypeScript's excess-property check does not look
    await refused(() => client.createTask(body), 'priority is not an allowed field (allowed: prompt, user_id, metadata, mode)');
    // @ts-expect-error JavaScript callers may pass anything
    await refused(() => client.createTask(null), 'createTask: the argument must be an object');
  });

  it('listTasks and iterateTasks: an unknown filter (offset too, for iterateTasks) is refused', async () => {
    // @ts-expect-error sort is not a filter of GET /tasks
    await refused(() => client.listTasks({ status: 'complete', sort: 'asc' }), 'listTasks: sort is not an allowed field');
    // @ts-expect-error iterateTasks moves the offset itself
    await refused(() => client.iterateTasks({ offset: 5 }).next(), 'iterateTasks: offset is not an allowed field');
  });

  it('registerTool: unknown fields of the manifest, its oauth and its actions are refused, at any depth', async () => {
    const actions = [{ ...ACTION, retries: 3 }];
    // @ts-expect-error an action's unknown field, from a variable
    await refused(() => client.registerTool({ ...MANIFEST, actions }), 'registerTool: actions.0.retries is not an allowed field');
    const oauth = { authorize_url: 'https://a.example', token_url: 'https://t.example', client_id: 'c', client_secret: 's', audience: 'x' };
    // @ts-expect-error an unknown oauth field
    await refused(() => client.registerTool({ ...MANIFEST, oauth }), 'registerTool: oauth.audience is not an allowed field');
    const manifest = { ...MANIFEST, version: 2 };
    // @ts-expect-error an unknown top-level field
    await refused(() => client.registerTool(manifest), 'registerTool: version is not an allowed field');
  });

  it('accepts every known field, open records with any key, and sends them', async () => {
    const body = { prompt: 'x', user_id: null, metadata: { any: { nested: true } }, mode: 'test' as const };
    await expect(client.createTask(body)).resolves.toEqual(CREATED);
    await expect(client.listTasks({ status: 'complete', user_id: 'u', limit: 1, offset: 0 })).resolves.toEqual({
      data: [],
      has_more: false,
    });
    await expect(client.listTasks()).resolves.toEqual({ data: [], has_more: false });
    const input_schema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false };
    await expect(client.registerTool({ ...MANIFEST, keywords: ['crm'], actions: [{ ...ACTION, input_schema }] })).resolves.toEqual(TOOL);
    expect(requests).toBe(4);
  });
});
