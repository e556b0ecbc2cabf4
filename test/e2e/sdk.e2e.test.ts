import {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TaskServiceClient,
  TaskServiceError,
  type ClientOptions,
  type RetryInfo,
  type ToolManifest,
} from '@tes/sdk';
import { admin, startStack, type Stack } from '@tes/testing';

/**
 * The SDK against the five services running as real processes, over the gateway's HTTPS
 * listener (self-signed development certificate: `insecure: true`).
 */
describe('SDK client against the running service', () => {
  let stack: Stack;
  let account: { account_id: string; api_keys: { test: string; live: string } };
  let client: TaskServiceClient;
  const retries: RetryInfo[] = [];
  const clientFor = (apiKey: string, options: ClientOptions = {}) =>
    new TaskServiceClient({ apiKey, baseUrl: stack.baseUrl, insecure: true, retry: { initialDelayMs: 50, maxDelayMs: 200 }, ...options });

  beforeAll(async () => {
    stack = await startStack({ env: { gateway: { REQUEST_TIMEOUT_MS: '1500' } } });
    account = await admin(['accounts', 'create', '--name', 'sdk-e2e'], stack.adminEnv);
    client = clientFor(account.api_keys.test, { onRetry: (r) => retries.push(r) });
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await stack?.stopAll();
  });

  let completeId = '';

  it('creates a task and waitForTask returns it complete with its result', async () => {
    const created = await client.createTask({ prompt: 'Echo "hello sdk"', metadata: { ref: 'sdk-1' } });
    expect(created).toEqual({
      id: expect.stringMatching(/^task_/),
      status: 'running',
      tool: 'text',
      created_at: expect.any(String),
      metadata: { ref: 'sdk-1' },
    });
    const polled: string[] = [];
    const done = await client.waitForTask(created.id, { timeoutMs: 20_000, initialIntervalMs: 100, onPoll: (t) => polled.push(t.status) });
    expect(done).toMatchObject({
      id: created.id,
      status: 'complete',
      tool: 'text',
      result: { text: 'hello sdk' },
      metadata: { ref: 'sdk-1' },
    });
    expect(done.completed_at).toMatch(/Z$/);
    expect(polled.at(-1)).toBe('complete');
    completeId = created.id;
  });

  it('creates once per Idempotency-Key: the same key returns the same task, a new call another', async () => {
    const key = `order-${Date.now()}`;
    const a = await client.createTask({ prompt: 'Echo "once"' }, { idempotencyKey: key });
    const b = await client.createTask({ prompt: 'Echo "once"' }, { idempotencyKey: key });
    const c = await client.createTask({ prompt: 'Echo "once"' });
    expect(b).toEqual(a);
    // The gateway's Idempotent-Replayed header, as the SDK exposes it.
    expect([a.replayed, b.replayed, c.replayed]).toEqual([false, true, false]);
    expect(c.id).not.toBe(a.id);
    const reused = await client.createTask({ prompt: 'Echo "other body"' }, { idempotencyKey: key }).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(ConflictError);
    expect(reused).toMatchObject({ status: 409, code: 'idempotency_key_reused' });
  });

  it('gets, lists with filters and paging, and traces', async () => {
    const got = await client.getTask(completeId);
    expect(got).toMatchObject({ id: completeId, status: 'complete', result: { text: 'hello sdk' } });

    const page = await client.listTasks({ status: 'complete', limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    expect(Object.keys(page.data[0] ?? {}).sort()).toEqual(['completed_at', 'created_at', 'id', 'status', 'tool']);
    const all: string[] = [];
    for await (const t of client.iterateTasks({ limit: 2 })) all.push(t.id);
    expect(all).toContain(completeId);
    expect(new Set(all).size).toBe(all.length);

    const trace = await client.getTrace(completeId);
    expect(trace).toMatchObject({ task_id: completeId, steps: [{ tool: 'text', action: 'echo', status: 'complete' }] });
    expect(Number.isInteger(trace.total_duration_ms)).toBe(true);
  });

  it("lists a user's connections, and revoking an unknown one is NotFoundError", async () => {
    await expect(client.listConnections('user_sdk')).resolves.toEqual({ data: [], has_more: false });
    const err = await client.revokeConnection('user_sdk', 'github').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as TaskServiceError).code).toBe('connection_not_found');
  });

  it('registers a custom tool from a manifest, lists it, gets it and deletes it; its client secret is never shown', async () => {
    const SECRET = 'sdk-e2e-client-secret';
    const manifest: ToolManifest = {
      name: 'sdk_tracker',
      description: 'Tickets in the SDK tracker',
      keywords: ['tracker'],
      base_url: 'https://tracker.sdk.example/api',
      oauth: {
        authorize_url: 'https://tracker.sdk.example/oauth/authorize',
        token_url: 'https://tracker.sdk.example/oauth/token',
        client_id: 'sdk-client',
        client_secret: SECRET,
        scopes: ['repo'],
      },
      actions: [
        {
          name: 'list_cards',
          description: 'List the cards of a board',
          method: 'GET',
          path: '/boards/{board}/cards',
          input_schema: { type: 'object', properties: { board: { type: 'string' } }, required: ['board'] },
        },
      ],
    };
    const { client_secret: _secret, ...publicOauth } = manifest.oauth!;
    await expect(client.listTools()).resolves.toEqual({ data: [], has_more: false });

    const tool = await client.registerTool(manifest);
    expect(tool).toEqual({ ...manifest, oauth: publicOauth, created_at: expect.stringMatching(/Z$/) });
    expect(JSON.stringify(tool)).not.toContain(SECRET);
    // registering again replaces the tool by name and keeps its created_at
    const replaced = await client.registerTool({ ...manifest, description: 'Cards in the SDK tracker' });
    expect(replaced).toEqual({ ...tool, description: 'Cards in the SDK tracker' });

    await expect(client.listTools()).resolves.toEqual({ data: [replaced], has_more: false });
    await expect(client.getTool('sdk_tracker')).resolves.toEqual(replaced);
    // live keys see the live environment's tools: none
    const live = clientFor(account.api_keys.live);
    await expect(live.listTools()).resolves.toEqual({ data: [], has_more: false });
    await expect(live.getTool('sdk_tracker')).rejects.toBeInstanceOf(NotFoundError);
    live.close();

    const refused = await client.registerTool({ ...manifest, name: 'github' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_request', message: expect.stringContaining('built-in') });

    await expect(client.deleteTool('sdk_tracker')).resolves.toBeUndefined();
    const gone = await client.getTool('sdk_tracker').catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(NotFoundError);
    expect(gone).toMatchObject({ status: 404, code: 'not_found', requestId: expect.stringMatching(/^req_/) });
    await expect(client.deleteTool('sdk_tracker')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.listTools()).resolves.toEqual({ data: [], has_more: false });
  });

  it("creates a signed, expiring settings link that opens the user's settings page", async () => {
    const link = await client.createSettingsLink('user_sdk');
    expect(Object.keys(link).sort()).toEqual(['expires_at', 'url']);
    expect(link.url.startsWith(`${stack.vaultPublicUrl}/settings?token=`)).toBe(true);
    const expires = Date.parse(link.expires_at);
    expect(expires).toBeGreaterThan(Date.now());
    expect(expires).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
    expect((await fetch(link.url)).status).toBe(200);
    expect((await fetch(`${link.url.slice(0, -3)}abc`)).status).toBeGreaterThanOrEqual(400);
  });

  it('throws typed errors with the spec codes and the request id', async () => {
    const badKey = clientFor('pk_test_00000000000000000000000000000000');
    const e401 = await badKey.listTasks().catch((e: unknown) => e);
    expect(e401).toBeInstanceOf(AuthenticationError);
    expect(e401).toMatchObject({ status: 401, code: 'invalid_api_key', requestId: expect.stringMatching(/^req_/) });
    badKey.close();

    const e404 = await client.getTask('task_doesnotexist').catch((e: unknown) => e);
    expect(e404).toBeInstanceOf(NotFoundError);
    expect(e404).toMatchObject({ status: 404, code: 'task_not_found', requestId: expect.any(String) });

    // test and live keys are separate worlds
    const live = clientFor(account.api_keys.live);
    await expect(live.getTask(completeId)).rejects.toMatchObject({ status: 404, code: 'task_not_found' });
    live.close();

    const e409 = await client.cancelTask(completeId).catch((e: unknown) => e);
    expect(e409).toBeInstanceOf(ConflictError);
    expect(e409).toMatchObject({ status: 409, code: 'task_already_complete' });

    const e422 = await client.createTask({ prompt: 'x'.repeat(10_001) }).catch((e: unknown) => e);
    expect(e422).toBeInstanceOf(InvalidRequestError);
    expect(e422).toMatchObject({ status: 422, code: 'prompt_too_long' });

    const e400 = await client.createTask({ prompt: 'Echo "x"', metadata: { k: 'v' }, mode: 'bogus' as 'live' }).catch((e: unknown) => e);
    expect(e400).toBeInstanceOf(InvalidRequestError);
    expect(e400).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(retries.filter((r) => r.error.status !== undefined && r.error.status < 500 && r.error.status !== 429)).toEqual([]);
  });

  it('refuses the self-signed development certificate unless told otherwise, without retrying', async () => {
    const seen: RetryInfo[] = [];
    const strict = new TaskServiceClient({ apiKey: account.api_keys.test, baseUrl: stack.baseUrl, onRetry: (r) => seen.push(r) });
    const err = await strict.listTasks().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as TaskServiceError).code).toBe('tls_error');
    expect(seen).toEqual([]);
  });

  it('answers RateLimitError with retryAfterSeconds once the account is over its requests per minute', async () => {
    const limited = await admin(['accounts', 'create', '--name', 'sdk-e2e-limited'], stack.adminEnv);
    await admin(['accounts', 'set-limits', limited.account_id, '--rpm', '2'], stack.adminEnv);
    const c = clientFor(limited.api_keys.test, { maxRetries: 0 });
    let err: unknown;
    // fixed one-minute windows: 6 calls see a 429 even if a window ends in between
    for (let i = 0; i < 6 && !err; i++)
      err = await c.listTasks().then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(RateLimitError);
    const rl = err as RateLimitError;
    expect(rl).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect(rl.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(rl.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(rl.headers['x-ratelimit-limit']).toBe('2');
    c.close();
  });

  it('cancels a running task, then 409 on a second cancel; a back end that does not answer is a ServerError after the retries', async () => {
    await stack.stop('executor'); // tasks stay running
    const t = await client.createTask({ prompt: 'Echo "never runs"' });
    expect(t.status).toBe('running');
    const cancelled = await client.cancelTask(t.id);
    expect(cancelled).toEqual({ id: t.id, status: 'cancelled', cancelled_at: expect.stringMatching(/Z$/) });
    await expect(client.getTask(t.id)).resolves.toMatchObject({ status: 'cancelled' });
    await expect(client.waitForTask(t.id)).resolves.toMatchObject({ status: 'cancelled' });
    await expect(client.cancelTask(t.id)).rejects.toMatchObject({ status: 409, code: 'task_already_complete' });

    // the trace is the executor's: with it down the gateway answers 503 temporarily_unavailable
    const seen: RetryInfo[] = [];
    const c = clientFor(account.api_keys.test, { maxRetries: 1, onRetry: (r) => seen.push(r) });
    const err = await c.getTrace(t.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 503, code: 'temporarily_unavailable', retryAfterSeconds: 1 });
    expect(seen.map((r) => r.retry)).toEqual([1]);
    expect(seen[0]!.delayMs).toBeGreaterThanOrEqual(1000); // Retry-After: 1, plus up to 250 ms of jitter
    expect(seen[0]!.delayMs).toBeLessThanOrEqual(1250);
    c.close();
  });
});
