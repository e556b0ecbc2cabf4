import { randomBytes } from 'node:crypto';
import { freePort, SERVICES, startStack, waitFor, type Stack } from '@tes/testing';
import { Browser, consent } from '../../services/oauth-vault/test/browser.js';
import { Api, captureLogs, createAccount, databaseDumps, findSecrets, webhooksOf, type Account } from '../support/e2e.js';
import { startGitHubAuthServer, type GitHubAuthServer } from '../support/github-auth-server.js';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';

/**
 * Managed OAuth end to end (issue 5, "done when"), with the five services as real processes,
 * a real OAuth 2.0 authorization server (oidc-provider, its own process) as GitHub's, and a
 * fake GitHub REST API beside it that accepts only that server's live tokens:
 *
 *   live-key task for a user with no connection → `waiting` (its GET carries `waiting` with the
 *   auth_url) + task.waiting webhook (auth_url) → a browser opens the auth_url (the vault's consent
 *   page), continues through sign-in and consent → the task resumes → `complete`
 *   → task.waiting then task.complete webhooks, in that order
 *   → no raw access or refresh token anywhere: API answers, webhooks, trace, logs, databases.
 *
 * And the refusal: denying consent fails the task with permission_denied (recoverable).
 * One consent resumes every task of that user waiting on the service (and no other user's);
 * after the connection is revoked through the API, a new task waits for consent again.
 * Consent links expire (CONSENT_LINK_TTL_S, short here) and work once: each GET of the waiting
 * task shows a fresh one.
 */
describe('managed OAuth: pause for consent, resume, never expose a token', () => {
  let auth: GitHubAuthServer;
  let stack: Stack;
  let receiver: HttpsReceiver;
  let account: Account;
  let api: Api;
  let vaultUrl: string;
  let logs: () => Record<string, string>;
  const PROMPT = 'List the open issues in acme/api';
  const LINK_TTL_S = 5;

  beforeAll(async () => {
    // Live-key webhooks must go to an https endpoint: a real TLS receiver the dispatcher trusts.
    receiver = await startHttpsReceiver();
    const vaultPort = await freePort();
    vaultUrl = `http://127.0.0.1:${vaultPort}`;
    auth = await startGitHubAuthServer({ redirectUri: `${vaultUrl}/oauth/callback` });
    stack = await startStack({
      env: {
        // debug: the more the services say, the more a leaked token would have to hide in.
        '*': { LOG_LEVEL: 'debug' },
        'oauth-vault': {
          ...auth.vaultEnv(),
          PUBLIC_PORT: String(vaultPort),
          PUBLIC_BASE_URL: vaultUrl,
          VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}`,
          VAULT_STATE_SECRET: randomBytes(32).toString('base64url'),
          CONSENT_LINK_TTL_S: String(LINK_TTL_S),
        },
        executor: { GITHUB_API_URL: auth.githubApiUrl },
        'webhook-dispatcher': { ...receiver.dispatcherEnv, WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200' },
      },
    });
    logs = captureLogs(stack);
    account = await createAccount(stack, 'oauth-flow-e2e', { url: receiver.url, envs: ['live'], adminEnv: receiver.dispatcherEnv });
    api = new Api(stack.baseUrl, account.api_keys.live);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await receiver?.close();
    await auth?.close();
  });

  const hooks = (id: string) => webhooksOf(receiver.received, id, account.webhook_secrets.live);
  const hook = (id: string, event: string) =>
    waitFor(() => hooks(id).find((h) => h.event === event), { what: `${event} webhook of ${id}`, timeoutMs: 20_000 });

  /** Creates the task and waits until it is `waiting` with its task.waiting webhook. */
  async function createWaitingTask(userId: string) {
    const created = await api.create({ prompt: PROMPT, user_id: userId, metadata: { case: userId } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'running', tool: 'github' });
    const id = created.json.id as string;

    await api.until(id, ['waiting', 'complete', 'failed'], 30_000);
    const w = await hook(id, 'task.waiting');
    expect(w.signatureOk).toBe(true);
    expect(w.data).toEqual({
      reason: 'oauth_consent_required',
      service: 'github',
      auth_url: expect.stringMatching(new RegExp(`^${vaultUrl}/oauth/consent/`)),
      message: expect.any(String),
    });
    expect(w.data.message.length).toBeGreaterThan(0);

    // A polling client gets the same from GET, with a freshly issued link (the webhook's may have expired already).
    const waiting = (await api.get(id)).json;
    expect(waiting).toMatchObject({ id, status: 'waiting', tool: 'github', metadata: { case: userId } });
    expect(waiting).not.toHaveProperty('result');
    expect(waiting).not.toHaveProperty('error');
    expect(waiting.waiting).toEqual({ ...w.data, auth_url: expect.stringMatching(new RegExp(`^${vaultUrl}/oauth/consent/`)) });
    return { id, authUrl: waiting.waiting.auth_url as string };
  }

  it('pauses a live task for consent, resumes it after the user grants access, and never exposes a token', async () => {
    const { id, authUrl } = await createWaitingTask('u_grants');
    // Nothing called GitHub yet: there was no token to call it with.
    expect(await auth.githubCalls()).toEqual([]);

    const browser = new Browser();
    const page = await consent(browser, authUrl);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Connected — you may close this window');
    // The browser really went through the authorization server and back to the vault's callback.
    expect(browser.visited.some((u) => u.startsWith(`${auth.issuer}/auth`))).toBe(true);
    expect(page.url.startsWith(`${vaultUrl}/oauth/callback`)).toBe(true);

    const done = await api.until(id, ['complete', 'failed', 'cancelled'], 30_000);
    expect(done).toMatchObject({
      id,
      status: 'complete',
      tool: 'github',
      result: {
        count: 2,
        items: [
          { number: 2, title: 'Add dark mode', state: 'open', labels: [], url: 'https://github.com/acme/api/issues/2' },
          { number: 1, title: 'Login fails on Safari', state: 'open', labels: ['bug'], url: 'https://github.com/acme/api/issues/1' },
        ],
      },
    });
    expect(done.completed_at).toMatch(/Z$/);

    // The provider API was called once, with the user's token, in GitHub's wire format.
    const calls = await auth.githubCalls();
    expect(calls).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/repos/acme/api/issues',
        accept: 'application/vnd.github+json',
        api_version: '2022-11-28',
        status: 200,
      }),
    ]);
    expect(calls[0]?.query).toMatch(/(^|&)state=open(&|$)/);

    const trace = await api.trace(id);
    expect(trace.status).toBe(200);
    // The pause (needs_authorization) is not a step run: the step ran once, after consent.
    expect(trace.json).toMatchObject({ task_id: id, steps: [{ tool: 'github', action: 'list_issues', status: 'complete' }] });
    expect(trace.json.steps).toHaveLength(1);

    // task.waiting, then task.complete, and nothing else (a redelivery may repeat one: dedup by event).
    const complete = await hook(id, 'task.complete');
    expect(complete.signatureOk).toBe(true);
    expect(complete.data).toMatchObject({ count: 2 });
    const all = hooks(id);
    const order = all.map((h) => h.event).filter((e, i, a) => a.indexOf(e) === i);
    expect(order).toEqual(['task.waiting', 'task.complete']);
    const lastWaiting = Math.max(...all.filter((h) => h.event === 'task.waiting').map((h) => h.receivedAt));
    const firstComplete = Math.min(...all.filter((h) => h.event === 'task.complete').map((h) => h.receivedAt));
    expect(lastWaiting).toBeLessThanOrEqual(firstComplete);
    expect(Date.parse(all.find((h) => h.event === 'task.waiting')?.timestamp ?? '')).toBeLessThanOrEqual(Date.parse(complete.timestamp));

    // A few more public reads, so their answers are searched too.
    expect((await api.call('GET', `/tasks?user_id=u_grants`)).status).toBe(200);
    expect((await api.call('GET', `/users/u_grants/connections`)).status).toBeLessThan(500);

    // ---- No raw token anywhere ----
    const issued = await auth.issued();
    expect(issued.access_tokens.length).toBeGreaterThanOrEqual(1);
    expect(issued.refresh_tokens.length).toBeGreaterThanOrEqual(1);
    // The executor called GitHub with a token this server issued (so these are the tokens to look for).
    expect(issued.access_tokens).toEqual(expect.arrayContaining(issued.bearer_tokens_seen));
    expect(issued.bearer_tokens_seen.length).toBeGreaterThanOrEqual(1);
    const secrets = [...new Set([...issued.access_tokens, ...issued.refresh_tokens, ...issued.bearer_tokens_seen])];
    expect(secrets.every((s) => s.length >= 20)).toBe(true);

    const serviceLogs = logs();
    const haystacks: Record<string, string> = {};
    api.responses.forEach((r, i) => (haystacks[`API answer #${i} ${r.method} ${r.url}`] = JSON.stringify(r.headers) + r.text));
    receiver.received.forEach((r, i) => (haystacks[`webhook #${i}`] = JSON.stringify(r.headers) + r.rawBody));
    haystacks['trace'] = trace.text;
    for (const s of SERVICES) haystacks[`${s} log`] = serviceLogs[s] ?? '';
    Object.assign(haystacks, await databaseDumps(stack));

    // The search is over real material: every service logged this task's flow, every database has data.
    for (const s of SERVICES) expect((serviceLogs[s] ?? '').length).toBeGreaterThan(0);
    expect(serviceLogs['executor']).toContain(id);
    expect(api.responses.length).toBeGreaterThanOrEqual(6);
    expect(receiver.received.length).toBeGreaterThanOrEqual(2);
    expect(Object.keys(haystacks).filter((k) => k.startsWith('db ')).length).toBeGreaterThanOrEqual(5);
    // The vault keeps the tokens sealed: something is stored for the connection, yet no raw token.
    expect(Object.entries(haystacks).some(([k, v]) => k.startsWith('db ') && k.includes('connections') && v.includes('u_grants'))).toBe(
      true,
    );

    expect(findSecrets(haystacks, secrets)).toEqual([]);
  });

  it('fails the task with permission_denied (recoverable, with a suggestion) when the user denies consent', async () => {
    const tokensBefore = (await auth.issued()).access_tokens.length;
    const githubCallsBefore = (await auth.githubCalls()).length;
    const { id, authUrl } = await createWaitingTask('u_denies');

    const page = await consent(new Browser(), authUrl, { deny: true });
    expect(page.text).toContain('Access not granted');

    const failed = await api.until(id, ['failed', 'complete', 'cancelled'], 30_000);
    expect(failed).toMatchObject({
      id,
      status: 'failed',
      tool: 'github',
      error: { code: 'permission_denied', recoverable: true, message: expect.any(String), suggestion: expect.any(String) },
    });
    expect(failed.error.suggestion.length).toBeGreaterThan(0);
    expect(failed.failed_at).toMatch(/Z$/);
    expect(failed).not.toHaveProperty('result');

    const f = await hook(id, 'task.failed');
    expect(f.signatureOk).toBe(true);
    expect(f.data.error).toMatchObject({ code: 'permission_denied', tool: 'github', recoverable: true, message: expect.any(String) });
    const order = hooks(id)
      .map((h) => h.event)
      .filter((e, i, a) => a.indexOf(e) === i);
    expect(order).toEqual(['task.waiting', 'task.failed']);

    // No code was exchanged and GitHub was never called for this task.
    expect((await auth.issued()).access_tokens.length).toBe(tokensBefore);
    expect((await auth.githubCalls()).length).toBe(githubCallsBefore);
    const trace = await api.trace(id);
    expect(trace.json).toMatchObject({ task_id: id, steps: [] });
  });

  it('resumes every task of the user waiting on the service after one consent; another user’s waiting task stays waiting', async () => {
    const callsBefore = (await auth.githubCalls()).length;
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await createWaitingTask('u_many'));
    const bystander = await createWaitingTask('u_bystander');

    // The user consents once, through the auth_url of one of the tasks.
    const page = await consent(new Browser(), mine[0]!.authUrl);
    expect(page.text).toContain('Connected — you may close this window');

    for (const { id } of mine) {
      const done = await api.until(id, ['complete', 'failed', 'cancelled'], 30_000);
      expect(done).toMatchObject({ id, status: 'complete', tool: 'github', metadata: { case: 'u_many' }, result: { count: 2 } });
      await hook(id, 'task.complete');
      const order = hooks(id)
        .map((h) => h.event)
        .filter((e, i, a) => a.indexOf(e) === i);
      expect(order).toEqual(['task.waiting', 'task.complete']);
    }
    // Each resumed task called GitHub once; nothing ran for the bystander.
    expect((await auth.githubCalls()).length).toBe(callsBefore + 3);
    expect((await api.get(bystander.id)).json).toMatchObject({ id: bystander.id, status: 'waiting' });
    expect(hooks(bystander.id).map((h) => h.event)).not.toContain('task.complete');
    const trace = await api.trace(bystander.id);
    expect(trace.json).toMatchObject({ task_id: bystander.id, steps: [] });

    // It was left waiting, not lost: its own user's consent resumes it.
    await consent(new Browser(), bystander.authUrl);
    expect(await api.until(bystander.id, ['complete', 'failed', 'cancelled'], 30_000)).toMatchObject({ status: 'complete' });
  });

  it('after the user’s connection is revoked through the API, a new task for the service waits for consent again', async () => {
    const first = await createWaitingTask('u_revokes');
    await consent(new Browser(), first.authUrl);
    expect(await api.until(first.id, ['complete', 'failed', 'cancelled'], 30_000)).toMatchObject({ status: 'complete' });
    const connected = await api.call('GET', '/users/u_revokes/connections');
    expect(connected.json.data).toEqual([expect.objectContaining({ service: 'github', status: 'connected' })]);

    const revoked = await api.call('DELETE', '/users/u_revokes/connections/github');
    expect(revoked.status).toBe(204);
    const after = await api.call('GET', '/users/u_revokes/connections');
    expect(after.json.data.filter((c: { status: string }) => c.status === 'connected')).toEqual([]);

    // A new task for GitHub is paused for consent again (task.waiting, reason oauth_consent_required,
    // with a fresh auth_url), without calling GitHub.
    const callsBefore = (await auth.githubCalls()).length;
    const second = await createWaitingTask('u_revokes');
    expect((await auth.githubCalls()).length).toBe(callsBefore);
    expect(await api.trace(second.id)).toMatchObject({ json: { task_id: second.id, steps: [] } });

    // Consenting again resumes it with a fresh token.
    await consent(new Browser(), second.authUrl);
    expect(await api.until(second.id, ['complete', 'failed', 'cancelled'], 30_000)).toMatchObject({
      status: 'complete',
      result: { count: 2 },
    });
    expect((await auth.githubCalls()).length).toBe(callsBefore + 1);
  });

  it('shows a waiting task’s consent link on GET; the link works once, expires, and a later GET gives a new working one', async () => {
    const { id, authUrl } = await createWaitingTask('u_polls');
    const page = await new Browser().get(authUrl);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<code>${account.account_id}</code>`);
    expect(page.text).toContain('<code>u_polls</code>');

    // Past the link's lifetime it is refused, whatever the reader.
    await new Promise((r) => setTimeout(r, (LINK_TTL_S + 1) * 1000));
    const expired = await new Browser().get(authUrl);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain('Ask the application for a new one');
    expect((await api.get(id)).json).toMatchObject({ status: 'waiting' });

    // Reading the task again issues a new link, which works.
    const again = (await api.get(id)).json;
    expect(again.waiting.auth_url).not.toBe(authUrl);
    const done = await consent(new Browser(), again.waiting.auth_url as string);
    expect(done.text).toContain('Connected — you may close this window');
    expect(await api.until(id, ['complete', 'failed', 'cancelled'], 30_000)).toMatchObject({ status: 'complete' });
    expect((await api.get(id)).json).not.toHaveProperty('waiting');
    // Used: the same link again is refused.
    expect((await new Browser().get(again.waiting.auth_url as string)).status).toBe(410);
  });
});
