import { findAction } from '@tes/catalog';
import { compile, type StepRun } from '@tes/contracts';
import { Broker } from '@tes/messaging';
import { runStep } from '../domain/run-step.use-case.js';
import { startFakeGitHub, type FakeGitHub } from '../tools/github/fake.js';
import { startFakeGoogle, type FakeGoogle } from '../test-support/fake-google.js';
import { startFakeNotion, type FakeNotion } from '../tools/notion/fake.js';
import { startFakeSlack, type FakeSlack } from '../tools/slack/fake.js';
import { startFakeVault, type FakeVault } from '../test-support/fake-vault.js';
import { AMQP_URL, startHarness, unique, type Harness } from '../test-support/harness.js';
import type { EngineSettings } from '../tools/tool.js';

/**
 * Live keys: real HTTP to fake provider servers that speak each provider's wire format
 * and check the bearer token; the token comes from a stand-in vault over the real
 * broker. Every spec 7.4 failure code is produced by a real HTTP fault.
 */
describe('runStep with live keys against fake providers', () => {
  let h: Harness;
  let vault: FakeVault;
  let github: FakeGitHub;
  let slack: FakeSlack;
  let google: FakeGoogle;
  let notion: FakeNotion;
  let settings: Partial<EngineSettings>;

  beforeAll(async () => {
    h = await startHarness();
    vault = await startFakeVault(h.broker);
    [github, slack, google, notion] = await Promise.all([startFakeGitHub(), startFakeSlack(), startFakeGoogle(), startFakeNotion()]);
    settings = {
      providerUrls: {
        github: github.url,
        slack: slack.url,
        google_calendar: google.calendarUrl,
        gmail: google.gmailUrl,
        notion: notion.url,
      },
    };
  });
  afterAll(async () => {
    await Promise.all([github, slack, google, notion].map((f) => f?.close()));
    await h?.close();
  });
  beforeEach(() => {
    vault.answer = () => ({ status: 'ok', access_token: 'tok-valid' });
    vault.requests.length = 0;
  });

  type StepInput = Partial<StepRun> & Pick<StepRun, 'tool' | 'action' | 'input'>;
  const step = (s: StepInput): StepRun => h.step({ environment: 'live', ...s });
  const live = (s: StepInput, extra: Partial<EngineSettings> = {}) =>
    runStep('idempotency_key' in s ? (s as StepRun) : step(s), h.deps({ ...settings, ...extra }));
  const valid = (tool: string, action: string, output: unknown) => {
    const check = compile(findAction(tool, action)?.output ?? {});
    return check(output) ? true : check.errors;
  };

  describe('happy paths, in each provider’s wire format', () => {
    it('GitHub: creates, lists, comments, labels, describes; sends the bearer token and an Idempotency-Key on writes', async () => {
      const created = await live({
        tool: 'github',
        action: 'create_issue',
        input: { owner: 'acme', repo: 'api', title: 'Live bug', labels: ['bug'] },
      });
      expect(created).toMatchObject({ outcome: 'complete', output: { number: 1, title: 'Live bug', labels: ['bug'], state: 'open' } });
      expect(valid('github', 'create_issue', created.output)).toBe(true);
      const post = github.requests.find((r) => r.method === 'POST');
      expect(post?.token).toBe('tok-valid');
      expect(post?.headers['idempotency-key']).toMatch(/^task_.+:0$/);
      expect(post?.headers['x-github-api-version']).toBe('2022-11-28');
      const listed = await live({ tool: 'github', action: 'list_issues', input: { owner: 'acme', repo: 'api', limit: 5 } });
      expect(listed.output).toMatchObject({ count: 1, items: [{ number: 1 }] });
      expect(valid('github', 'list_issues', listed.output)).toBe(true);
      expect(github.requests.find((r) => r.method === 'GET')?.headers['idempotency-key']).toBeUndefined();
      const c = await live({
        tool: 'github',
        action: 'comment_on_issue',
        input: { owner: 'acme', repo: 'api', issue_number: 1, body: 'hi' },
      });
      expect(valid('github', 'comment_on_issue', c.output)).toBe(true);
      const l = await live({
        tool: 'github',
        action: 'add_labels',
        input: { owner: 'acme', repo: 'api', issue_number: 1, labels: ['p1'] },
      });
      expect(l.output).toEqual({ issue_number: 1, labels: ['bug', 'p1'] });
      const r = await live({ tool: 'github', action: 'get_repository', input: { owner: 'acme', repo: 'api' } });
      expect(r.output).toMatchObject({ full_name: 'acme/api', stars: 42, open_issues: 1 });
      expect(valid('github', 'get_repository', r.output)).toBe(true);
      expect(vault.requests[0]).toMatchObject({
        account_id: 'acct_1',
        environment: 'live',
        user_id: 'user_1',
        service: 'github',
        scopes: ['repo'],
      });
    });

    it('Slack, Google Calendar, Gmail and Notion', async () => {
      const posted = await live({ tool: 'slack', action: 'post_message', input: { channel: 'general', text: 'hello' } });
      expect(posted.output).toMatchObject({ channel: 'C01GENERAL', text: 'hello' });
      expect(valid('slack', 'post_message', posted.output)).toBe(true);
      const ch = await live({ tool: 'slack', action: 'list_channels', input: { limit: 2 } });
      expect(ch.output).toMatchObject({ count: 2, items: [{ id: 'C01GENERAL', name: 'general' }, { name: 'random' }] });

      const ev = await live({
        tool: 'google_calendar',
        action: 'create_event',
        input: { summary: 'Sync', start: '2030-01-02T10:00:00Z', attendees: ['a@example.com'] },
      });
      expect(ev.output).toMatchObject({
        summary: 'Sync',
        start: '2030-01-02T10:00:00.000Z',
        end: '2030-01-02T11:00:00.000Z',
        attendees: ['a@example.com'],
      });
      expect(valid('google_calendar', 'create_event', ev.output)).toBe(true);
      const evs = await live({
        tool: 'google_calendar',
        action: 'list_events',
        input: { time_min: '2030-01-02T00:00:00Z', time_max: '2030-01-03T00:00:00Z' },
      });
      expect(evs.output).toMatchObject({ count: 1, items: [{ summary: 'Sync' }] });

      const sent = await live({
        tool: 'gmail',
        action: 'send_email',
        input: { to: ['bob@example.com'], subject: 'Hi', body: 'Body text' },
      });
      expect(sent.output).toMatchObject({ id: 's1', to: ['bob@example.com'], subject: 'Hi' });
      const raw = Buffer.from(google.sent[0]?.raw ?? '', 'base64url').toString('utf8');
      expect(raw).toContain('To: bob@example.com\r\nSubject: Hi');
      expect(raw.endsWith('\r\n\r\nBody text')).toBe(true);
      const found = await live({ tool: 'gmail', action: 'search_email', input: { query: 'from:alice@example.com invoice' } });
      expect(found.output).toMatchObject({
        count: 1,
        items: [{ id: 'm1', from: 'Alice <alice@example.com>', subject: 'Invoice March', to: ['me@example.com'] }],
      });
      expect(valid('gmail', 'search_email', found.output)).toBe(true);
      expect(google.requests.filter((r) => r.path === '/gmail/v1/users/me/messages/m1')[0]?.query.getAll('metadataHeaders')).toEqual([
        'From',
        'To',
        'Subject',
        'Date',
      ]);

      const page = await live({ tool: 'notion', action: 'create_page', input: { parent_id: 'db1', title: 'Plan', content: 'text' } });
      expect(page.output).toMatchObject({ title: 'Plan', parent_id: 'db1' });
      expect(valid('notion', 'create_page', page.output)).toBe(true);
      const q = await live({ tool: 'notion', action: 'query_database', input: { database_id: 'db1', filter_text: 'plan' } });
      expect(q.output).toMatchObject({ count: 1, items: [{ title: 'Plan' }] });
    });
  });

  describe('failure mapping (spec 7.4)', () => {
    it('5xx: retried with backoff, 3 attempts, then service_unavailable naming the status and the attempts', async () => {
      github.fail({ kind: 'unavailable', status: 503 }, 3, /\/repos\/down\/x\/issues$/);
      const before = github.requests.length;
      const res = await live({ tool: 'github', action: 'list_issues', input: { owner: 'down', repo: 'x' } });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'service_unavailable', tool: 'github', recoverable: true } });
      expect(res.error?.message).toBe('GitHub answered HTTP 503 after 3 attempts');
      expect(res.error?.suggestion).toBe('GitHub is not answering right now; retry the task in a few minutes');
      expect(github.requests.length - before).toBe(3);
    });

    it('5xx then success: the retry succeeds and the step completes', async () => {
      notion.fail({ kind: 'unavailable', status: 502 }, 2);
      const res = await live({ tool: 'notion', action: 'query_database', input: { database_id: 'db-none' } });
      expect(res).toMatchObject({ outcome: 'complete', output: { count: 0 } });
    });

    it('no answer at all (connection refused) is service_unavailable too', async () => {
      const res = await live(
        { tool: 'slack', action: 'list_channels', input: {} },
        { providerUrls: { ...settings.providerUrls!, slack: 'http://127.0.0.1:1' } },
      );
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'service_unavailable' } });
      expect(res.error?.message).toMatch(/Slack answered no answer \(ECONNREFUSED\) after 3 attempts/);
    });

    it('429: honours Retry-After, retries and succeeds', async () => {
      slack.fail({ kind: 'rate_limited', retryAfter: 1 }, 1);
      const t = Date.now();
      const res = await live({ tool: 'slack', action: 'list_channels', input: {} });
      expect(res.outcome).toBe('complete');
      expect(Date.now() - t).toBeGreaterThanOrEqual(950);
    });

    it('429 every time: rate_limited after 3 attempts', async () => {
      google.fail({ kind: 'rate_limited', retryAfter: 0 }, 3);
      const res = await live({ tool: 'google_calendar', action: 'list_events', input: {} });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'rate_limited', tool: 'google_calendar', recoverable: true } });
      expect(res.error?.message).toMatch(/Google Calendar rate limit exceeded \(HTTP 429, 3 attempts/);
      expect(res.error?.suggestion).toBe('Google Calendar limits how many requests it accepts; retry the task after 1 s');
    });

    it('a Retry-After longer than allowed fails at once with rate_limited; GitHub’s 403 rate limit counts as one', async () => {
      github.fail({ kind: 'rate_limited', retryAfter: 120 }, 1);
      const t = Date.now();
      const res = await live({ tool: 'github', action: 'get_repository', input: { owner: 'a', repo: 'b' } });
      expect(res).toMatchObject({
        outcome: 'failed',
        error: {
          code: 'rate_limited',
          message: expect.stringContaining('retry after 120 s'),
          recoverable: true,
          suggestion: 'GitHub limits how many requests it accepts; retry the task after 2 minutes',
        },
      });
      expect(Date.now() - t).toBeLessThan(2000);
    });

    it('401: one forced refresh through the vault, then success with the new token', async () => {
      vault.answer = (q) => ({ status: 'ok', access_token: q.force_refresh ? 'tok-refreshed' : 'tok-stale' });
      google.tokens.add('tok-refreshed');
      const res = await live({ tool: 'gmail', action: 'search_email', input: { query: 'lunch' } });
      expect(res).toMatchObject({ outcome: 'complete', output: { count: 1, items: [{ subject: 'Lunch?' }] } });
      expect(vault.requests.map((r) => r.force_refresh ?? false)).toEqual([false, true]);
    });

    it('401 again after the refresh: auth_token_expired, recoverable, with a suggestion', async () => {
      notion.fail({ kind: 'unauthorized' }, 2);
      const res = await live({ tool: 'notion', action: 'create_page', input: { parent_id: 'db1', title: 'x' } });
      expect(res).toMatchObject({
        outcome: 'failed',
        error: {
          code: 'auth_token_expired',
          tool: 'notion',
          recoverable: true,
          suggestion: 'Reconnect Notion for the user (re-authorize it), then retry the task',
        },
      });
      expect(vault.requests.map((r) => r.force_refresh ?? false)).toEqual([false, true]);
      expect(notion.pages.some((p) => JSON.stringify(p).includes('"x"'))).toBe(false);
    });

    it.each([
      [
        'github',
        'get_repository',
        { owner: 'a', repo: 'b' },
        /insufficient permissions \(Resource not accessible by integration; accepted scopes: repo\)/,
      ],
      ['slack', 'post_message', { channel: 'general', text: 'x' }, /missing_scope, needed: chat:write/],
      ['gmail', 'send_email', { to: ['a@example.com'], subject: 's', body: 'b' }, /insufficient authentication scopes/],
      ['notion', 'query_database', { database_id: 'db1' }, /Insufficient permissions/],
    ] as const)(
      '403 insufficient scope on %s: permission_denied, recoverable, suggesting the scopes',
      async (tool, action, input, detail) => {
        const fake = { github, slack, gmail: google, notion }[tool];
        fake.fail({ kind: 'insufficient_scope' }, 1);
        const res = await live({ tool, action, input: { ...input } });
        expect(res).toMatchObject({
          outcome: 'failed',
          error: { code: 'permission_denied', tool, recoverable: true, suggestion: expect.stringContaining('re-authorize') },
        });
        expect(res.error?.message).toMatch(detail);
        expect(res.error?.suggestion).toContain(findAction(tool, action)?.scopes[0] ?? 'share it with the integration');
      },
    );

    it.each([
      ['github', 'list_issues', { owner: 'a', repo: 'b' }],
      ['slack', 'list_channels', {}],
      ['google_calendar', 'list_events', {}],
      ['notion', 'query_database', { database_id: 'db1' }],
    ] as const)('rejected client credentials on %s: invalid_credentials, no refresh', async (tool, action, input) => {
      const fake = { github, slack, google_calendar: google, notion }[tool];
      fake.fail({ kind: 'client_rejected' }, 1);
      const res = await live({ tool, action, input: { ...input } });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'invalid_credentials', tool, recoverable: false } });
      expect(res.error?.suggestion).toMatch(/^Check the (GitHub|Slack|Google Calendar|Notion) OAuth client id and secret/);
      expect(vault.requests).toHaveLength(1);
    });
  });

  describe('what a failure tells the user to do', () => {
    it('GitHub 404: names the repository and the issue, to check them and that the account can see them', async () => {
      const res = await live({
        tool: 'github',
        action: 'comment_on_issue',
        input: { owner: 'acme', repo: 'missing', issue_number: 7, body: 'hi' },
      });
      expect(res).toMatchObject({
        outcome: 'failed',
        error: {
          code: 'step_failed',
          tool: 'github',
          recoverable: false,
          message: 'GitHub: not found (Not Found)',
          suggestion:
            'Check that the repository acme/missing and issue #7 exist, that their names are spelled right, and that the connected GitHub account can see them',
        },
      });
    });

    it('Slack channel_not_found names the channel', async () => {
      const res = await live({ tool: 'slack', action: 'post_message', input: { channel: 'no-such-channel', text: 'hi' } });
      expect(res.error).toMatchObject({
        code: 'step_failed',
        message: 'Slack has no channel #no-such-channel that you can see (channel_not_found)',
        suggestion: 'Check the channel name (without "#"); for a private channel, make sure you are a member of it',
      });
    });

    it('Notion 404 (object_not_found) names the database and says the integration needs access to it', async () => {
      // A base URL under which the fake knows no route: its every answer is Notion's 404.
      const res = await live(
        { tool: 'notion', action: 'query_database', input: { database_id: 'db-gone' } },
        { providerUrls: { ...settings.providerUrls!, notion: `${notion.url}/nowhere` } },
      );
      expect(res.error).toMatchObject({
        code: 'step_failed',
        message: 'Notion has no database shared with the integration (Could not find the object.)',
      });
      expect(res.error?.suggestion).toMatch(/share the page or database with the integration/);
    });
  });

  describe('the vault’s answers', () => {
    it('authorization_required: needs_authorization with the auth URL, and nothing recorded', async () => {
      vault.answer = () => ({
        status: 'authorization_required',
        auth_url: 'https://vault.example/oauth/start/p_1',
        message: 'Connect Slack to continue',
      });
      const s = step({ tool: 'slack', action: 'post_message', input: { channel: 'general', text: 'hi' } });
      const before = slack.requests.length;
      const res = await live(s);
      expect(res).toEqual({
        task_id: s.task_id,
        account_id: 'acct_1',
        environment: 'live',
        step_index: 0,
        outcome: 'needs_authorization',
        authorization: {
          reason: 'oauth_consent_required',
          service: 'slack',
          auth_url: 'https://vault.example/oauth/start/p_1',
          message: 'Connect Slack to continue',
        },
        duration_ms: expect.any(Number),
      });
      expect(slack.requests.length).toBe(before);
      expect(await h.steps.find(s.idempotency_key)).toBeNull();
      // After consent the orchestrator re-dispatches the same step (same key): it runs now.
      vault.answer = () => ({ status: 'ok', access_token: 'tok-valid' });
      const after = await live(s);
      expect(after.outcome).toBe('complete');
      expect(await h.steps.find(s.idempotency_key)).not.toBeNull();
    });

    it('expired: auth_token_expired, recoverable; error: invalid_credentials', async () => {
      vault.answer = () => ({ status: 'expired', message: 'The GitHub refresh token was revoked' });
      const expired = await live({ tool: 'github', action: 'get_repository', input: { owner: 'a', repo: 'b' } });
      expect(expired).toMatchObject({
        outcome: 'failed',
        error: {
          code: 'auth_token_expired',
          message: 'The GitHub refresh token was revoked',
          recoverable: true,
          suggestion: 'Reconnect GitHub for the user (re-authorize it), then retry the task',
        },
      });
      vault.answer = () => ({ status: 'error', message: 'no OAuth provider is configured for github' });
      const error = await live({ tool: 'github', action: 'get_repository', input: { owner: 'a', repo: 'b' } });
      expect(error).toMatchObject({
        outcome: 'failed',
        error: {
          code: 'invalid_credentials',
          message: 'no OAuth provider is configured for github',
          recoverable: false,
          suggestion: expect.stringContaining('Check the GitHub OAuth client'),
        },
      });
    });

    it('a step without user_id fails at once, naming the field', async () => {
      const res = await live({ tool: 'github', action: 'get_repository', user_id: null, input: { owner: 'a', repo: 'b' } });
      expect(res).toMatchObject({
        outcome: 'failed',
        error: {
          code: 'step_failed',
          message: expect.stringContaining('user_id is required'),
          suggestion: 'Create the task with the user_id of the person whose GitHub account it should use',
        },
      });
    });

    it('a vault that does not answer is our fault: nothing is recorded and the message is retried', async () => {
      const lonely = new Broker({ url: AMQP_URL, source: 'executor-test', logger: h.logger, namespace: unique('novault') });
      await lonely.connect();
      try {
        const s = step({ tool: 'github', action: 'get_repository', input: { owner: 'a', repo: 'b' } });
        await expect(runStep(s, { ...h.deps({ ...settings, vaultTimeoutMs: 300 }), broker: lonely })).rejects.toThrow(
          /credential vault unavailable/,
        );
        expect(await h.steps.find(s.idempotency_key)).toBeNull();
      } finally {
        await lonely.close(1000);
      }
    });
  });

  describe('side effects exactly once', () => {
    it('a step re-run after losing its record sends the same Idempotency-Key; the provider answers the first issue', async () => {
      const s = step({ tool: 'github', action: 'create_issue', input: { owner: 'once', repo: 'r', title: 'Exactly once' } });
      const first = await live(s);
      await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: s.idempotency_key });
      const second = await live(s);
      expect(second.output).toEqual(first.output);
      expect(github.issues.get('once/r')).toHaveLength(1);
      const keys = github.requests.filter((r) => r.path === '/repos/once/r/issues').map((r) => r.headers['idempotency-key']);
      expect(keys).toEqual([s.idempotency_key, s.idempotency_key]);
    });

    it('Google Calendar: the event id comes from the idempotency key; a replay answers 409 and reads the event back', async () => {
      const s = step({ tool: 'google_calendar', action: 'create_event', input: { summary: 'Once', start: '2031-01-01T09:00:00Z' } });
      const first = await live(s);
      await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: s.idempotency_key });
      // Without the header cache (a provider that ignores Idempotency-Key), the event id still dedups.
      const second = await runStep(s, h.deps({ ...settings }));
      expect(second.output).toEqual(first.output);
      expect([...google.events.values()].filter((e) => e.summary === 'Once')).toHaveLength(1);
    });

    it('a recorded step is never run again', async () => {
      const s = step({ tool: 'slack', action: 'post_message', input: { channel: 'general', text: 'once only' } });
      await live(s);
      await live(s);
      expect(slack.messages.filter((m) => m.text === 'once only')).toHaveLength(1);
      expect(slack.requests.filter((r) => (r.body as { text?: string } | undefined)?.text === 'once only')).toHaveLength(1);
    });
  });
});
