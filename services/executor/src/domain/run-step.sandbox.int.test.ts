import { findAction } from '@tes/catalog';
import { compile } from '@tes/contracts';
import { startFakeVault } from '../test-support/fake-vault.js';
import { startHarness, type Harness } from '../test-support/harness.js';
import { runStep } from './run-step.use-case.js';

/**
 * Test keys: every connected service runs in a simulated provider stored in the
 * executor's own database, per account and user, with no network; references between
 * steps resolve from the task's recorded steps.
 */
describe('runStep with test keys (sandbox)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  const run = (s: Parameters<Harness['step']>[0]) => runStep(h.step(s), h.deps());
  function expectOutputMatchesSchema(tool: string, action: string, output: unknown) {
    const check = compile(findAction(tool, action)?.output ?? {});
    expect({ valid: check(output), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
  }

  it('shows an issue created in the sandbox when listing issues, numbered per repository', async () => {
    const user = 'u_gh';
    const a = await run({
      tool: 'github',
      action: 'create_issue',
      user_id: user,
      input: { owner: 'acme', repo: 'api', title: 'First', labels: ['bug'] },
    });
    const b = await run({ tool: 'github', action: 'create_issue', user_id: user, input: { owner: 'acme', repo: 'api', title: 'Second' } });
    const other = await run({
      tool: 'github',
      action: 'create_issue',
      user_id: user,
      input: { owner: 'acme', repo: 'web', title: 'Elsewhere' },
    });
    expect([a.output?.['number'], b.output?.['number'], other.output?.['number']]).toEqual([1, 2, 1]);
    expectOutputMatchesSchema('github', 'create_issue', a.output);

    const list = await run({ tool: 'github', action: 'list_issues', user_id: user, input: { owner: 'acme', repo: 'api' } });
    expect(list.outcome).toBe('complete');
    expect(list.output).toMatchObject({
      count: 2,
      items: [
        { number: 2, title: 'Second' },
        { number: 1, title: 'First', labels: ['bug'], state: 'open' },
      ],
    });
    expectOutputMatchesSchema('github', 'list_issues', list.output);

    const labelled = await run({
      tool: 'github',
      action: 'add_labels',
      user_id: user,
      input: { owner: 'acme', repo: 'api', issue_number: 2, labels: ['triage', 'triage'] },
    });
    expect(labelled.output).toEqual({ issue_number: 2, labels: ['triage'] });
    const bugs = await run({
      tool: 'github',
      action: 'list_issues',
      user_id: user,
      input: { owner: 'acme', repo: 'api', labels: ['triage'] },
    });
    expect(bugs.output).toMatchObject({ count: 1, items: [{ number: 2 }] });

    const comment = await run({
      tool: 'github',
      action: 'comment_on_issue',
      user_id: user,
      input: { owner: 'acme', repo: 'api', issue_number: 1, body: 'On it' },
    });
    expect(comment.output).toMatchObject({ issue_number: 1, body: 'On it' });
    const repo = await run({ tool: 'github', action: 'get_repository', user_id: user, input: { owner: 'acme', repo: 'api' } });
    expect(repo.output).toMatchObject({ full_name: 'acme/api', open_issues: 2 });
    expectOutputMatchesSchema('github', 'get_repository', repo.output);
  });

  it('keeps each user and each account in a world of its own', async () => {
    await run({ tool: 'github', action: 'create_issue', user_id: 'u_iso_a', input: { owner: 'iso', repo: 'x', title: 'Mine' } });
    const otherUser = await run({ tool: 'github', action: 'list_issues', user_id: 'u_iso_b', input: { owner: 'iso', repo: 'x' } });
    const otherAccount = await run({
      tool: 'github',
      action: 'list_issues',
      user_id: 'u_iso_a',
      account_id: 'acct_2',
      input: { owner: 'iso', repo: 'x' },
    });
    expect(otherUser.output).toEqual({ items: [], count: 0 });
    expect(otherAccount.output).toEqual({ items: [], count: 0 });
  });

  it('runs a recorded step at most once and creates its object once even when the record was lost', async () => {
    const step = h.step({
      tool: 'github',
      action: 'create_issue',
      user_id: 'u_once',
      input: { owner: 'once', repo: 'r', title: 'Only once' },
    });
    const first = await runStep(step, h.deps());
    const again = await runStep(step, h.deps());
    expect(again).toEqual(first);
    // A crash between the provider call and the record: the record is gone, the object is not duplicated.
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
    const rerun = await runStep(step, h.deps());
    expect(rerun.output?.['number']).toBe(first.output?.['number']);
    const list = await run({ tool: 'github', action: 'list_issues', user_id: 'u_once', input: { owner: 'once', repo: 'r' } });
    expect(list.output?.['count']).toBe(1);
  });

  it('resolves {{steps.N.output…}} references from the recorded steps of the same task', async () => {
    const task = `task_${Date.now()}ref`;
    const created = await run({
      task_id: task,
      step_index: 0,
      tool: 'github',
      action: 'create_issue',
      user_id: 'u_ref',
      input: { owner: 'ref', repo: 'r', title: 'Chained' },
    });
    const labelled = await run({
      task_id: task,
      step_index: 1,
      tool: 'github',
      action: 'add_labels',
      user_id: 'u_ref',
      input: { owner: 'ref', repo: 'r', issue_number: '{{steps.0.output.number}}', labels: ['chained'] },
    });
    expect(labelled.output).toEqual({ issue_number: created.output?.['number'], labels: ['chained'] });
    const listed = await run({
      task_id: task,
      step_index: 2,
      tool: 'github',
      action: 'list_issues',
      user_id: 'u_ref',
      input: { owner: 'ref', repo: 'r' },
    });
    expect(listed.outcome).toBe('complete');
    const posted = await run({
      task_id: task,
      step_index: 3,
      tool: 'slack',
      action: 'post_message',
      user_id: 'u_ref',
      input: { channel: 'eng', text: 'Issues:\n{{steps.2.output.items}}' },
    });
    expect(posted.output?.['text']).toMatch(/^Issues:\n• #1 Chained \(https:\/\/sandbox\.tes\.invalid\/github\/ref\/r\/issues\/1\)$/);
    const counted = await run({
      task_id: task,
      step_index: 4,
      tool: 'data',
      action: 'count',
      user_id: 'u_ref',
      input: { items: '{{steps.2.output.items}}' },
    });
    expect(counted.output).toEqual({ count: 1 });
    const whole = await run({
      task_id: task,
      step_index: 5,
      tool: 'text',
      action: 'echo',
      user_id: 'u_ref',
      input: { text: '{{steps.2.output.items.0}}' },
    });
    expect(whole.output?.['text']).toMatch(/^#1 Chained/);
  });

  it('skips a step whose item is not there (fewer items than planned) and records it as skipped in the trace', async () => {
    const task = `task_${Date.now()}skip`;
    await run({
      task_id: task,
      step_index: 0,
      tool: 'github',
      action: 'list_issues',
      user_id: 'u_skip',
      input: { owner: 'empty', repo: 'r' },
    });
    const res = await run({
      task_id: task,
      step_index: 1,
      tool: 'github',
      action: 'comment_on_issue',
      user_id: 'u_skip',
      input: { owner: 'empty', repo: 'r', issue_number: '{{steps.0.output.items.0.number}}', body: 'x' },
    });
    expect(res.outcome).toBe('complete');
    expect(res.output).toMatchObject({ skipped: true });
    const trace = await h.steps.traceOf(task, 'acct_1', 'test');
    expect(trace.map((t) => t.trace.status)).toEqual(['complete', 'skipped']);
    // A step depending on a skipped one is skipped too.
    const next = await run({
      task_id: task,
      step_index: 2,
      tool: 'text',
      action: 'echo',
      user_id: 'u_skip',
      input: { text: '{{steps.1.output.body}}' },
    });
    expect(next.output).toMatchObject({ skipped: true });
  });

  it('fails a step whose reference names nothing, naming the reference, and asks for the value in the request', async () => {
    const task = `task_${Date.now()}bad`;
    await run({ task_id: task, step_index: 0, tool: 'text', action: 'echo', input: { text: 'a' } });
    const res = await run({ task_id: task, step_index: 1, tool: 'text', action: 'echo', input: { text: '{{steps.0.output.nope}}' } });
    expect(res).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        message: expect.stringContaining('steps.0.output.nope'),
        recoverable: false,
        suggestion: expect.stringMatching(/^An earlier step's result has no message text to use here; name it in the request instead\./),
      },
    });
    const forward = await run({
      task_id: task,
      step_index: 2,
      tool: 'github',
      action: 'comment_on_issue',
      input: { owner: 'a', repo: 'b', issue_number: '{{steps.5.output.number}}', body: 'x' },
    });
    expect(forward.error?.message).toMatch(/does not run before step 2/);
    expect(forward.error?.suggestion).toBe(
      'An earlier step\'s result has no issue number to use here; name it in the request instead. Give the issue number, e.g. "issue #12"',
    );
  });

  it('fails with a message naming the field when the input does not fit the schema, suggesting it in the user’s words', async () => {
    const res = await run({ tool: 'github', action: 'create_issue', input: { owner: 'acme', title: 'No repo' } });
    expect(res).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        message: 'invalid input for github.create_issue: repo is required',
        tool: 'github',
        recoverable: false,
        suggestion: 'Name the repository as owner/name, e.g. "acme/webapp"',
      },
    });
    const noSubject = await run({ tool: 'gmail', action: 'send_email', input: { to: ['team@acme.com'], body: 'Agenda to follow' } });
    expect(noSubject.error).toMatchObject({ code: 'step_failed', suggestion: 'Add a subject, e.g. with the subject "Q2 offsite"' });
    const badAddress = await run({ tool: 'gmail', action: 'send_email', input: { to: ['team'], subject: 's', body: 'b' } });
    expect(badAddress.error?.suggestion).toBe(
      '"team" is not an email address. Give the recipient\'s email address, e.g. "to bob@example.com"',
    );
  });

  it('an unknown action, and a custom action’s input that does not fit its registered schema, say what to do', async () => {
    const unknown = await run({ tool: 'github', action: 'fly_away', input: {} });
    expect(unknown.error).toMatchObject({
      code: 'step_failed',
      suggestion: 'GitHub cannot "fly away" here; ask for something else it can do',
    });
    const custom = {
      base_url: 'https://crm.example.com/api/',
      method: 'POST' as const,
      path: '/contacts',
      input_schema: {
        type: 'object',
        properties: { full_name: { type: 'string', description: 'Name of the contact' }, vip: { type: 'boolean' } },
        required: ['full_name'],
      },
      service: null,
      scopes: [],
    };
    const res = await run({ tool: 'acme_crm', action: 'create_contact', input: { vip: true }, custom });
    expect(res.error).toMatchObject({
      code: 'step_failed',
      message: 'invalid input for acme_crm.create_contact: full_name is required',
      suggestion: 'Give the name of the contact',
    });
  });

  it('a sandbox "not found" says which issue in which repository, and to check it', async () => {
    const res = await run({
      tool: 'github',
      action: 'comment_on_issue',
      input: { owner: 'acme', repo: 'nowhere', issue_number: 99, body: 'x' },
    });
    expect(res).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        recoverable: false,
        suggestion:
          'Check that the repository acme/nowhere and issue #99 exist, that their names are spelled right, and that the connected GitHub account can see them',
      },
    });
  });

  it('simulates Slack, Google Calendar, Gmail and Notion statefully', async () => {
    const u = { user_id: 'u_all' };
    const posted = await run({ ...u, tool: 'slack', action: 'post_message', input: { channel: 'launch', text: 'We are live' } });
    expectOutputMatchesSchema('slack', 'post_message', posted.output);
    const channels = await run({ ...u, tool: 'slack', action: 'list_channels', input: {} });
    expect((channels.output?.['items'] as { name: string }[]).map((c) => c.name)).toEqual(['general', 'launch', 'random']);
    expectOutputMatchesSchema('slack', 'list_channels', channels.output);
    const byId = await run({ ...u, tool: 'slack', action: 'post_message', input: { channel: posted.output?.['channel'], text: 'again' } });
    expect(byId.output?.['channel']).toBe(posted.output?.['channel']);

    const event = await run({
      ...u,
      tool: 'google_calendar',
      action: 'create_event',
      input: { summary: 'Review', start: '2030-05-01T14:00:00Z', attendees: ['a@example.com'] },
    });
    expect(event.output).toMatchObject({
      summary: 'Review',
      start: '2030-05-01T14:00:00.000Z',
      end: '2030-05-01T15:00:00.000Z',
      attendees: ['a@example.com'],
    });
    expectOutputMatchesSchema('google_calendar', 'create_event', event.output);
    const day = await run({
      ...u,
      tool: 'google_calendar',
      action: 'list_events',
      input: { time_min: '2030-05-01T00:00:00Z', time_max: '2030-05-02T00:00:00Z' },
    });
    expect(day.output).toMatchObject({ count: 1, items: [{ summary: 'Review' }] });
    const otherDay = await run({
      ...u,
      tool: 'google_calendar',
      action: 'list_events',
      input: { time_min: '2030-05-02T00:00:00Z', time_max: '2030-05-03T00:00:00Z' },
    });
    expect(otherDay.output?.['count']).toBe(0);

    const sent = await run({
      ...u,
      tool: 'gmail',
      action: 'send_email',
      input: { to: ['bob@example.com'], subject: 'Quarterly report', body: 'Numbers attached' },
    });
    expectOutputMatchesSchema('gmail', 'send_email', sent.output);
    const found = await run({ ...u, tool: 'gmail', action: 'search_email', input: { query: 'to:bob@example.com report' } });
    expect(found.output).toMatchObject({ count: 1, items: [{ subject: 'Quarterly report', to: ['bob@example.com'] }] });
    expectOutputMatchesSchema('gmail', 'search_email', found.output);
    const welcome = await run({ ...u, tool: 'gmail', action: 'search_email', input: { query: 'from:sandbox@example.com' } });
    expect(welcome.output?.['count']).toBe(1);

    const page = await run({
      ...u,
      tool: 'notion',
      action: 'create_page',
      input: { parent_id: 'roadmap', title: 'Q3 goals', content: 'Ship it' },
    });
    expectOutputMatchesSchema('notion', 'create_page', page.output);
    const q = await run({ ...u, tool: 'notion', action: 'query_database', input: { database_id: 'roadmap', filter_text: 'q3' } });
    expect(q.output).toMatchObject({ count: 1, items: [{ title: 'Q3 goals', parent_id: 'roadmap' }] });
    expectOutputMatchesSchema('notion', 'query_database', q.output);
  });

  it('asks the vault for a sandbox connection by default (not with SANDBOX_AUTO_CONNECT): a missing one pauses the step, unrecorded', async () => {
    const vault = await startFakeVault(h.broker, () => ({
      status: 'authorization_required',
      auth_url: 'https://vault.example/oauth/start/abc',
      message: 'Connect GitHub',
    }));
    const step = h.step({ tool: 'github', action: 'list_issues', user_id: 'u_consent', input: { owner: 'a', repo: 'b' } });
    const res = await runStep(step, h.deps({ sandboxAutoConnect: false }));
    expect(res).toMatchObject({
      outcome: 'needs_authorization',
      authorization: { reason: 'oauth_consent_required', service: 'github', auth_url: 'https://vault.example/oauth/start/abc' },
    });
    expect(await h.steps.find(step.idempotency_key)).toBeNull();
    expect(vault.requests[0]).toMatchObject({ service: 'github', user_id: 'u_consent', scopes: ['repo'] });
    // Consent given: the same step (same key) now runs.
    vault.answer = () => ({ status: 'ok', access_token: 'unused-in-sandbox' });
    const after = await runStep(step, h.deps({ sandboxAutoConnect: false }));
    expect(after.outcome).toBe('complete');
  });

  it('runs the text and data utilities', async () => {
    expect((await run({ tool: 'text', action: 'lowercase', input: { text: 'ABC' } })).output).toEqual({ text: 'abc' });
    expect((await run({ tool: 'data', action: 'pluck', input: { items: [{ a: 1 }, { b: 2 }, { a: 3 }], field: 'a' } })).output).toEqual({
      values: [1, 3],
      count: 2,
    });
    expect((await run({ tool: 'data', action: 'join', input: { values: ['x', { title: 'y' }], separator: ' | ' } })).output).toEqual({
      text: 'x | y',
    });
  });

  it('answers a simulated 200 to http.post with test keys, sending nothing', async () => {
    const res = await run({ tool: 'http', action: 'post', input: { url: 'https://hooks.example.com/x', json: { a: 1 } } });
    expect(res.output).toMatchObject({ status: 200, json: { sandbox: true, received: { a: 1 } } });
  });
});
