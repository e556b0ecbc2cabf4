import { request, startStack, waitFor, type Stack } from '@tes/testing';
import { Api, createAccount, webhooksOf, type Account } from '../support/e2e.js';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';

/**
 * Test keys meet the same consent pause as live keys (issue 20, finding 7), with the five services
 * as real processes and no OAuth provider configured at all: a test-key task for a user with no
 * sandbox connection waits with an auth_url to the vault's sandbox consent page; Allow there
 * resumes it to `complete`, Deny fails another one with permission_denied, as live consent does.
 * The executor runs with its default (SANDBOX_AUTO_CONNECT off), not the stacks' auto-connect.
 */
describe('sandbox consent: a test-key task waits, and the sandbox consent page resumes or fails it', () => {
  let stack: Stack;
  let receiver: HttpsReceiver;
  let account: Account;
  let api: Api;
  const PROMPT = 'List the open issues in acme/api';

  beforeAll(async () => {
    receiver = await startHttpsReceiver();
    stack = await startStack({
      env: {
        executor: { SANDBOX_AUTO_CONNECT: 'false' },
        'webhook-dispatcher': { ...receiver.dispatcherEnv, WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200' },
      },
    });
    account = await createAccount(stack, 'sandbox-consent-e2e', { url: receiver.url, envs: ['test'], adminEnv: receiver.dispatcherEnv });
    api = new Api(stack.baseUrl, account.api_keys.test);
  }, 120_000);

  afterAll(async () => {
    await stack?.stopAll();
    await receiver?.close();
  });

  const hook = (id: string, event: string) =>
    waitFor(() => webhooksOf(receiver.received, id, account.webhook_secrets.test).find((h) => h.event === event), {
      what: `${event} webhook of ${id}`,
      timeoutMs: 20_000,
    });

  async function waitingTask(userId: string): Promise<{ id: string; authUrl: string }> {
    const created = await api.create({ prompt: PROMPT, user_id: userId });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect(await api.until(id, ['waiting', 'complete', 'failed'])).toMatchObject({ id, status: 'waiting', tool: 'github' });
    const w = await hook(id, 'task.waiting');
    expect(w.data).toEqual({
      reason: 'oauth_consent_required',
      service: 'github',
      auth_url: expect.stringMatching(new RegExp(`^${stack.vaultPublicUrl}/sandbox/consent/pa_`)),
      message: expect.any(String),
    });
    return { id, authUrl: w.data.auth_url as string };
  }

  const decide = (authUrl: string, decision: string) =>
    request('POST', authUrl, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `decision=${decision}` });

  it('Allow on the sandbox consent page stores a sandbox connection and resumes the task to complete', async () => {
    const { id, authUrl } = await waitingTask('u_allows');

    const page = await request('GET', authUrl);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Sandbox');
    expect(page.text).toContain('Nothing is sent to GitHub');
    expect(page.text).toContain('u_allows');
    expect(page.text).toMatch(/<button[^>]*value="allow"[^>]*>Allow<\/button>/);
    expect(page.text).toMatch(/<button[^>]*value="deny"[^>]*>Deny<\/button>/);

    const allowed = await decide(authUrl, 'allow');
    expect(allowed.status).toBe(200);
    expect(allowed.text).toContain('Connected (sandbox)');

    const done = await api.until(id, ['complete', 'failed', 'cancelled']);
    expect(done).toMatchObject({ id, status: 'complete', tool: 'github', result: { count: expect.any(Number) } });
    await hook(id, 'task.complete');

    // Single use: the link is refused once decided, on the page and on a second decision.
    expect((await request('GET', authUrl)).status).toBe(404);
    expect((await decide(authUrl, 'deny')).status).toBe(404);

    // The connection is the user's: a new task of the same user runs at once, and it is listed.
    const again = await api.create({ prompt: PROMPT, user_id: 'u_allows' });
    expect(await api.until(again.json.id as string, ['waiting', 'complete', 'failed'])).toMatchObject({ status: 'complete' });
    const conns = await api.call('GET', '/users/u_allows/connections');
    expect(conns.status).toBe(200);
    expect(JSON.stringify(conns.json)).toContain('github');
    expect(conns.text).not.toContain('sandbox_');
  });

  it('Deny on the sandbox consent page fails the task with permission_denied, as live does', async () => {
    const { id, authUrl } = await waitingTask('u_denies');
    const denied = await decide(authUrl, 'deny');
    expect(denied.status).toBe(200);
    expect(denied.text).toContain('Access not granted (sandbox)');
    const failed = await api.until(id, ['complete', 'failed', 'cancelled']);
    expect(failed).toMatchObject({ id, status: 'failed', error: { code: 'permission_denied', recoverable: true } });
    await hook(id, 'task.failed');
  });

  it('answers 404 for an unknown sandbox link and 400 for a decision that is neither allow nor deny', async () => {
    expect((await request('GET', `${stack.vaultPublicUrl}/sandbox/consent/pa_unknown`)).status).toBe(404);
    const { authUrl } = await waitingTask('u_undecided');
    expect((await decide(authUrl, 'maybe')).status).toBe(400);
    expect((await request('GET', authUrl)).status).toBe(200);
  });
});
