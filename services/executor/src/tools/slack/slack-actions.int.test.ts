import { findAction } from '@tes/catalog';
import { compile, type StepRun } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startFakeVault, type FakeVault } from '../../test-support/fake-vault.js';
import { startHarness, type Harness } from '../../test-support/harness.js';
import { DEFAULT_SETTINGS } from '../tool.js';
import { startFakeSlack, type FakeSlack } from './fake.js';

type StepInput = Partial<StepRun> & Pick<StepRun, 'action' | 'input'>;

function schemaErrors(action: string, output: unknown) {
  const check = compile(findAction('slack', action)?.output ?? {});
  return check(output) ? null : check.errors;
}

/** Slack's direct messages, channel creation, invitations and history against a fake Slack Web API. */
describe('slack actions with live keys', () => {
  let h: Harness;
  let vault: FakeVault;
  let slack: FakeSlack;

  beforeAll(async () => {
    h = await startHarness();
    vault = await startFakeVault(h.broker);
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await slack?.close();
    await h?.close();
  });
  beforeEach(() => {
    vault.answer = () => ({ status: 'ok', access_token: 'tok-valid' });
    vault.requests.length = 0;
  });

  const live = (s: StepInput) =>
    runStep(
      h.step({ environment: 'live', tool: 'slack', ...s }),
      h.deps({ providerUrls: { ...DEFAULT_SETTINGS.providerUrls, slack: slack.url } }),
    );
  const sent = (from: number) => slack.requests.slice(from).map((r) => `${r.method} ${r.path}`);

  it('send_direct_message: an email is looked up, the DM opened, then the message posted in it', async () => {
    const before = slack.requests.length;
    const res = await live({ action: 'send_direct_message', input: { user: 'bob@acme.test', text: 'Lunch?' } });
    expect(res).toMatchObject({ outcome: 'complete', output: { channel: 'D02BOB', text: 'Lunch?', user: 'U02BOB' } });
    expect(schemaErrors('send_direct_message', res.output)).toBeNull();
    expect(sent(before)).toEqual(['GET /users.lookupByEmail', 'POST /conversations.open', 'POST /chat.postMessage']);
    const [lookup, open, post] = slack.requests.slice(before);
    expect(lookup?.query.get('email')).toBe('bob@acme.test');
    expect(lookup?.headers['idempotency-key']).toBeUndefined();
    expect(open?.body).toEqual({ users: 'U02BOB' });
    expect(post?.body).toEqual({ channel: 'D02BOB', text: 'Lunch?' });
    expect(post?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(vault.requests[0]?.scopes).toEqual(['chat:write', 'im:write', 'users:read', 'users:read.email']);
  });

  it.each([
    ['@alice', 'U01ALICE'],
    ['bob', 'U02BOB'],
    ['Chloé Dubois', 'U03CHLOE'],
    ['U01ALICE', 'U01ALICE'],
  ])('send_direct_message resolves %s to %s through users.list (handle, display name, full name, id)', async (user, id) => {
    const before = slack.requests.length;
    const res = await live({ action: 'send_direct_message', input: { user, text: 'hi' } });
    expect(res.output).toMatchObject({ user: id });
    expect(sent(before)[0]).toBe(id === user ? 'POST /conversations.open' : 'GET /users.list');
  });

  it('follows users.list’s cursor to the last page (a full name must be unique)', async () => {
    const before = slack.requests.length;
    const res = await live({ action: 'send_direct_message', input: { user: 'chloe', text: 'hi' } });
    expect(res.output).toMatchObject({ user: 'U03CHLOE' });
    const pages = slack.requests.slice(before).filter((r) => r.path === '/users.list');
    expect(pages.map((r) => r.query.get('cursor'))).toEqual([null, expect.any(String), expect.any(String)]);
    expect(pages.map((r) => r.query.get('limit'))).toEqual(['200', '200', '200']);
  });

  it('create_channel, invite_to_channel by handle and email, then list_messages shows what was posted, newest first', async () => {
    const before = slack.requests.length;
    const created = await live({ action: 'create_channel', input: { name: 'launch-q3', is_private: true } });
    expect(created).toMatchObject({ outcome: 'complete', output: { name: 'launch-q3', is_private: true } });
    expect(schemaErrors('create_channel', created.output)).toBeNull();
    expect(slack.requests[before]?.body).toEqual({ name: 'launch-q3', is_private: true });
    const id = String(created.output?.['id']);

    const invited = await live({ action: 'invite_to_channel', input: { channel: 'launch-q3', users: ['@alice', 'bob@acme.test'] } });
    expect(invited).toMatchObject({ outcome: 'complete', output: { channel: id, invited: ['U01ALICE', 'U02BOB'] } });
    expect(schemaErrors('invite_to_channel', invited.output)).toBeNull();
    const invite = slack.requests.find((r) => r.path === '/conversations.invite');
    expect(invite?.body).toEqual({ channel: id, users: 'U01ALICE,U02BOB' });
    expect(slack.requests.find((r) => r.path === '/conversations.list')?.query.get('types')).toBe('public_channel,private_channel');
    expect(slack.members.get(id)).toEqual(new Set(['U00ME', 'U01ALICE', 'U02BOB']));

    await live({ action: 'post_message', input: { channel: id, text: 'first' } });
    await live({ action: 'post_message', input: { channel: id, text: 'second' } });
    const listed = await live({ action: 'list_messages', input: { channel: 'launch-q3', limit: 5 } });
    expect(listed).toMatchObject({
      outcome: 'complete',
      output: { count: 2, items: [{ text: 'second', user: 'U00ME' }, { text: 'first' }] },
    });
    expect(schemaErrors('list_messages', listed.output)).toBeNull();
    const history = slack.requests.filter((r) => r.path === '/conversations.history').at(-1);
    expect(Object.fromEntries(history?.query ?? [])).toEqual({ channel: id, limit: '5' });
  });

  it('list_messages sends oldest as Slack seconds and takes a channel id as is', async () => {
    const before = slack.requests.length;
    const res = await live({ action: 'list_messages', input: { channel: 'C01GENERAL', oldest: '2024-03-09T16:00:00Z' } });
    expect(res.outcome).toBe('complete');
    expect(sent(before)).toEqual(['GET /conversations.history']);
    expect(slack.requests[before]?.query.get('oldest')).toBe('1710000000.000000');
  });

  it.each<[string, StepInput['input'], string, RegExp, RegExp]>([
    ['send_direct_message', { user: '@nobody', text: 'x' }, 'user', /no user "@nobody"/, /@handle, full name or email/],
    ['send_direct_message', { user: 'ghost@acme.test', text: 'x' }, 'users_not_found', /ghost@acme.test/, /Check the email address/],
    ['invite_to_channel', { channel: 'nowhere', users: ['alice'] }, 'channel_not_found', /no channel #nowhere/, /channel name/],
    ['create_channel', { name: 'general' }, 'name_taken', /named #general already exists/, /another channel name/],
    ['invite_to_channel', { channel: 'general', users: ['alice'] }, 'already_in_channel', /already a member of #general/, /Nothing to do/],
    ['list_messages', { channel: 'secret' }, 'not_in_channel', /not a member of #secret/, /Join the channel/],
  ])('%s fails clearly on %s (%s) with a suggestion', async (action, input, _code, message, suggestion) => {
    if (!slack.channels.some((c) => c.name === 'secret'))
      slack.channels.push({ id: 'C09SECRET', name: 'secret', is_private: true, num_members: 3 });
    const res = await live({ action, input });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', tool: 'slack', recoverable: false } });
    expect(res.error?.message).toMatch(message);
    expect(res.error?.suggestion).toMatch(suggestion);
  });

  it('missing_scope: permission_denied, recoverable, naming the scopes to grant', async () => {
    slack.fail({ kind: 'insufficient_scope' }, 1);
    const res = await live({ action: 'create_channel', input: { name: 'scoped' } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'permission_denied', recoverable: true } });
    expect(res.error?.suggestion).toContain('channels:manage, groups:write');
  });

  it('several people of the same full name are ambiguous: nothing is sent, the handles are named', async () => {
    const before = slack.requests.length;
    const res = await live({ action: 'send_direct_message', input: { user: 'Sam Lee', text: 'x' } });
    expect(res.error).toMatchObject({
      code: 'step_failed',
      message: 'Several Slack users are named "Sam Lee": @sam.lee, @saml',
      suggestion: 'Name the person by their @handle or email address',
    });
    expect(sent(before).every((r) => r === 'GET /users.list')).toBe(true);
  });
});

describe('slack actions with test keys (sandbox)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  const run = (s: StepInput) => runStep(h.step({ tool: 'slack', user_id: 'u_slack', ...s }), h.deps());

  it('create_channel, invite, post, list_messages: state kept per user, each step once', async () => {
    const created = await run({ action: 'create_channel', input: { name: 'war-room', is_private: true } });
    expect(created).toMatchObject({ outcome: 'complete', output: { name: 'war-room', is_private: true } });
    expect(schemaErrors('create_channel', created.output)).toBeNull();
    const id = created.output?.['id'];

    const invite = h.step({
      tool: 'slack',
      user_id: 'u_slack',
      action: 'invite_to_channel',
      input: { channel: 'war-room', users: ['@alice', 'bob@acme.test'] },
    });
    const invited = await runStep(invite, h.deps());
    expect(invited.output).toEqual({ channel: id, invited: [expect.stringMatching(/^U/), expect.stringMatching(/^U/)] });
    expect(schemaErrors('invite_to_channel', invited.output)).toBeNull();
    // The same step again (its record lost) answers the same; another step inviting alice is refused.
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: invite.idempotency_key });
    expect((await runStep(invite, h.deps())).output).toEqual(invited.output);
    const again = await run({ action: 'invite_to_channel', input: { channel: String(id), users: ['alice'] } });
    expect(again.error).toMatchObject({ code: 'step_failed', message: expect.stringMatching(/already a member of #war-room/) });

    await run({ action: 'post_message', input: { channel: 'war-room', text: 'one' } });
    await run({ action: 'post_message', input: { channel: String(id), text: 'two' } });
    const listed = await run({ action: 'list_messages', input: { channel: 'war-room' } });
    expect(listed.output).toMatchObject({ count: 2, items: [{ text: 'two' }, { text: 'one' }] });
    expect(schemaErrors('list_messages', listed.output)).toBeNull();
    const later = await run({ action: 'list_messages', input: { channel: 'war-room', oldest: '2999-01-01T00:00:00Z' } });
    expect(later.output).toEqual({ items: [], count: 0 });

    const channels = await run({ action: 'list_channels', input: {} });
    expect(channels.output?.['items']).toContainEqual({ id, name: 'war-room', is_private: true, num_members: 1 });
    const elsewhere = await runStep(
      h.step({ tool: 'slack', user_id: 'u_other', action: 'list_messages', input: { channel: 'war-room' } }),
      h.deps(),
    );
    expect(elsewhere.error?.message).toMatch(/no channel #war-room/);
  });

  it('create_channel: a taken name is refused, a re-run of the same step is not', async () => {
    const step = h.step({ tool: 'slack', user_id: 'u_slack2', action: 'create_channel', input: { name: 'ops' } });
    const first = await runStep(step, h.deps());
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
    expect((await runStep(step, h.deps())).output).toEqual(first.output);
    const dup = await run({ user_id: 'u_slack2', action: 'create_channel', input: { name: 'ops' } });
    expect(dup.error).toMatchObject({ code: 'step_failed', suggestion: expect.stringMatching(/another channel name/) });
    const general = await run({ user_id: 'u_slack2', action: 'create_channel', input: { name: 'general' } });
    expect(general.outcome).toBe('failed');
  });

  it('send_direct_message: one message per step, the same person for a handle and an email', async () => {
    const step = h.step({ tool: 'slack', user_id: 'u_slack3', action: 'send_direct_message', input: { user: '@dana', text: 'hi' } });
    const a = await runStep(step, h.deps());
    expect(schemaErrors('send_direct_message', a.output)).toBeNull();
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
    expect((await runStep(step, h.deps())).output).toEqual(a.output);
    const b = await run({ user_id: 'u_slack3', action: 'send_direct_message', input: { user: 'dana@acme.test', text: 'again' } });
    expect(b.output).toMatchObject({ user: a.output?.['user'], channel: a.output?.['channel'], ts: '1700000000.000002' });
  });
});
