import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SERVICES, admin, freePort, startStack, waitFor, type Stack } from '@tes/testing';
import { Browser, consent } from '../../services/oauth-vault/test/browser.js';
import { Api, captureLogs, createAccount, databaseDumps, findSecrets, webhooksOf, type Account } from '../support/e2e.js';
import { startGitHubAuthServer, type GitHubAuthServer } from '../support/github-auth-server.js';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';

/**
 * Custom tools end to end (issue 4): an account registers an HTTP tool with its own OAuth
 * provider through POST /v1/tools; a live task planned with it pauses for the user's consent
 * at that provider (a real OAuth 2.0 server), resumes, and calls the tool's API (a fake REST
 * API that accepts only that server's live tokens). The client secret is never shown, logged
 * or stored in clear; deleting the tool removes it from planning.
 */
describe('custom tools: register, plan, consent at their own provider, run, delete', () => {
  let auth: GitHubAuthServer;
  let stack: Stack;
  let receiver: HttpsReceiver;
  let account: Account;
  let live: Api;
  let test: Api;
  let logs: () => Record<string, string>;
  const CLIENT_SECRET = 'vault-client-secret-123';
  const PROMPT = 'Show the open acme tracker cards for board: acme, column: api';

  const manifest = () => ({
    name: 'acme_tracker',
    description: 'Tickets in the Acme tracker',
    keywords: ['tracker'],
    base_url: auth.githubApiUrl,
    oauth: {
      authorize_url: `${auth.issuer}/auth`,
      token_url: `${auth.issuer}/token`,
      client_id: 'vault-client',
      client_secret: CLIENT_SECRET,
      scopes: ['repo'],
    },
    actions: [
      {
        name: 'list_cards',
        description: 'List the cards of a board',
        method: 'GET',
        path: '/repos/{board}/{column}/issues',
        input_schema: {
          type: 'object',
          properties: { board: { type: 'string' }, column: { type: 'string' }, state: { type: 'string', enum: ['open', 'closed', 'all'] } },
          required: ['board', 'column'],
        },
      },
    ],
  });

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    const vaultPort = await freePort();
    const vaultUrl = `http://127.0.0.1:${vaultPort}`;
    auth = await startGitHubAuthServer({ redirectUri: `${vaultUrl}/oauth/callback` });
    stack = await startStack({
      env: {
        '*': { LOG_LEVEL: 'debug' },
        'oauth-vault': {
          PUBLIC_PORT: String(vaultPort),
          PUBLIC_BASE_URL: vaultUrl,
          VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}`,
          VAULT_STATE_SECRET: randomBytes(32).toString('base64url'),
        },
        // The tool's API is plain http on loopback: the development setting lets live calls reach it.
        executor: { HTTP_TOOL_ALLOW_HOSTS: '127.0.0.1', OUTBOUND_ALLOW_PRIVATE: 'true' },
        'webhook-dispatcher': { ...receiver.dispatcherEnv, WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200' },
      },
    });
    logs = captureLogs(stack);
    account = await createAccount(stack, 'custom-tools-e2e', { url: receiver.url, envs: ['live'], adminEnv: receiver.dispatcherEnv });
    live = new Api(stack.baseUrl, account.api_keys.live);
    test = new Api(stack.baseUrl, account.api_keys.test);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await receiver?.close();
    await auth?.close();
  });

  it('refuses bad manifests with 400 invalid_request naming the field', async () => {
    const cases: [object, RegExp][] = [
      [{ ...manifest(), name: 'github' }, /built-in/],
      [{ ...manifest(), name: 'Bad Name' }, /^name must match pattern/],
      [{ ...manifest(), base_url: undefined }, /^base_url is required$/],
      [{ ...manifest(), base_url: 'ftp://x.example' }, /^base_url must match pattern/],
      [{ ...manifest(), actions: [{ ...manifest().actions[0], path: '/repos/{org}/issues' }] }, /actions\.0\.path uses \{org\}/],
      [
        { ...manifest(), actions: [{ ...manifest().actions[0], input_schema: { type: 'object', properties: { a: { type: 'nope' } } } }] },
        /actions\.0\.input_schema is not a valid JSON Schema/,
      ],
      [{ ...manifest(), oauth: { ...manifest().oauth, client_secret: undefined } }, /^oauth\.client_secret is required$/],
      [
        { ...manifest(), actions: [manifest().actions[0], manifest().actions[0]] },
        /actions\.1\.name "list_cards" is used by another action/,
      ],
    ];
    for (const [body, message] of cases) {
      const r = await live.call('POST', '/tools', body);
      expect([r.status, r.json.error.code]).toEqual([400, 'invalid_request']);
      expect(r.json.error.message).toMatch(message);
    }
    expect((await live.call('GET', '/tools')).json).toEqual({ data: [], has_more: false });
    expect((await live.call('GET', '/tools/Nope!')).status).toBe(400);
    expect((await live.call('GET', '/tools/acme_tracker')).json.error.code).toBe('not_found');
    expect((await live.call('DELETE', '/tools/acme_tracker')).status).toBe(404);
  });

  it('registers a tool (never echoing its secret), plans a live task with it, pauses for consent at its provider and completes', async () => {
    const created = await live.call('POST', '/tools', manifest());
    expect(created.status).toBe(201);
    const {
      oauth: { client_secret: _s, ...publicOauth },
      ...rest
    } = manifest();
    expect(created.json).toEqual({ ...rest, oauth: publicOauth, created_at: expect.stringMatching(/Z$/) });
    const replaced = await live.call('POST', '/tools', manifest());
    expect([replaced.status, replaced.json.created_at]).toEqual([200, created.json.created_at]);
    expect((await live.call('GET', '/tools')).json).toEqual({ data: [created.json], has_more: false });
    expect((await live.call('GET', '/tools/acme_tracker')).json).toEqual(created.json);
    // Test keys see another world: no tool there.
    expect((await test.call('GET', '/tools')).json.data).toEqual([]);
    const elsewhere = await test.create({ prompt: PROMPT, user_id: 'u1', metadata: {} });
    expect(elsewhere.json.tool ?? elsewhere.json.error?.code).not.toBe('acme_tracker');

    // It needs a user: the tool acts on behalf of one.
    const noUser = await live.create({ prompt: PROMPT });
    expect([noUser.status, noUser.json.error.code]).toEqual([400, 'invalid_request']);
    expect(noUser.json.error.message).toContain('user_id');

    const task = await live.create({ prompt: PROMPT, user_id: 'u_custom' });
    expect(task.status).toBe(201);
    expect(task.json).toMatchObject({ status: 'running', tool: 'acme_tracker' });
    const id = task.json.id as string;
    expect(await live.until(id, ['waiting', 'failed', 'complete'], 30_000)).toMatchObject({ status: 'waiting' });
    const waiting = await waitFor(
      () => webhooksOf(receiver.received, id, account.webhook_secrets.live).find((h) => h.event === 'task.waiting'),
      {
        what: 'task.waiting webhook',
        timeoutMs: 20_000,
      },
    );
    expect(waiting.data).toMatchObject({ reason: 'oauth_consent_required', service: 'acme_tracker' });
    expect(await auth.githubCalls()).toEqual([]);

    const browser = new Browser();
    const page = await consent(browser, waiting.data.auth_url as string);
    expect(page.text).toContain('Connected');
    // The consent went through the tool's own authorization server.
    expect(browser.visited.some((u) => u.startsWith(`${auth.issuer}/auth`) && u.includes('client_id=vault-client'))).toBe(true);

    const done = await live.until(id, ['complete', 'failed', 'cancelled'], 30_000);
    expect(done).toMatchObject({ status: 'complete', tool: 'acme_tracker', result: { status: 200, data: expect.any(Array) } });
    expect(done.result.data.map((i: { number: number }) => i.number)).toEqual(expect.arrayContaining([1, 2]));
    // The API was called once, with a live token of the tool's provider (the fake refuses any other).
    expect(await auth.githubCalls()).toEqual([expect.objectContaining({ method: 'GET', path: '/repos/acme/api/issues', status: 200 })]);
    expect((await live.trace(id)).json).toMatchObject({ steps: [{ tool: 'acme_tracker', action: 'list_cards', status: 'complete' }] });
    expect((await live.call('GET', '/users/u_custom/connections')).json.data).toEqual([
      expect.objectContaining({ service: 'acme_tracker', status: 'connected' }),
    ]);

    // The client secret was never in an answer, a log line or a database in clear.
    const haystacks: Record<string, string> = {};
    live.responses.forEach((r, i) => (haystacks[`API answer #${i} ${r.url}`] = r.text));
    const serviceLogs = logs();
    for (const s of SERVICES) haystacks[`${s} log`] = serviceLogs[s] ?? '';
    Object.assign(haystacks, await databaseDumps(stack));
    expect(Object.keys(haystacks).some((k) => k.startsWith('db ') && k.includes('custom_providers'))).toBe(true);
    expect(findSecrets(haystacks, [CLIENT_SECRET])).toEqual([]);
  });

  it('previews the custom steps with test keys without calling anything, and forgets the tool on delete', async () => {
    expect((await test.call('POST', '/tools', manifest())).status).toBe(201);
    const calls = (await auth.githubCalls()).length;
    const preview = await test.call('POST', '/tasks', { prompt: PROMPT, user_id: 'u2', mode: 'test' });
    const previewed = await test.until(preview.json.id as string, ['complete', 'failed'], 20_000);
    expect(previewed.result).toEqual({
      preview: {
        tool: 'acme_tracker',
        steps: [
          {
            tool: 'acme_tracker',
            action: 'list_cards',
            input: { board: 'acme', column: 'api', state: 'open' },
            side_effect: 'read',
            missing: [],
          },
        ],
        derived: [],
      },
    });
    expect(await auth.githubCalls()).toHaveLength(calls);

    expect((await live.call('DELETE', '/tools/acme_tracker')).status).toBe(204);
    expect((await live.call('GET', '/tools/acme_tracker')).status).toBe(404);
    const after = await live.create({ prompt: PROMPT, user_id: 'u_custom' });
    expect(after.json.tool ?? after.json.error?.code).not.toBe('acme_tracker');
    // The users' connections to it went with it; the test environment's tool is untouched.
    expect((await live.call('GET', '/users/u_custom/connections')).json.data).toEqual([]);
    expect((await test.call('GET', '/tools')).json.data.map((t: { name: string }) => t.name)).toEqual(['acme_tracker']);
  });

  it('the operator CLI registers, lists and deletes tools through the same checks', async () => {
    const env = { ...stack.adminEnv, AMQP_NAMESPACE: stack.namespace };
    const file = path.join(tmpdir(), `tool-${Date.now()}.json`);
    writeFileSync(file, JSON.stringify({ ...manifest(), name: 'ops_tool', oauth: undefined }));
    const registered = await admin(['tools', 'register', '--account', account.account_id, '--env', 'live', '--file', file], env);
    expect(registered).toMatchObject({ created: true, tool: { name: 'ops_tool', base_url: auth.githubApiUrl } });
    expect(registered.tool).not.toHaveProperty('oauth');
    const listed = await admin(['tools', 'list', '--account', account.account_id, '--env', 'live'], env);
    expect(listed.map((t: { name: string }) => t.name)).toContain('ops_tool');
    // The API sees what the CLI registered.
    expect((await live.call('GET', '/tools/ops_tool')).status).toBe(200);
    writeFileSync(file, JSON.stringify({ ...manifest(), name: 'github' }));
    await expect(admin(['tools', 'register', '--account', account.account_id, '--env', 'live', '--file', file], env)).rejects.toThrow(
      /invalid_request.*built-in/,
    );
    expect(await admin(['tools', 'delete', '--account', account.account_id, '--env', 'live', '--name', 'ops_tool'], env)).toEqual({
      deleted: 'ops_tool',
    });
    await expect(admin(['tools', 'delete', '--account', account.account_id, '--env', 'live', '--name', 'ops_tool'], env)).rejects.toThrow(
      /not_found/,
    );
  });
});
