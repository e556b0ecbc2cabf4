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

/** reply_in_thread and search_messages against a fake Slack Web API (its wire format). */
describe('slack threads and search with live keys', () => {
  let h: Harness;
  let vault: FakeVault;
  let slack: FakeSlack;

  beforeAll(async () => {
    h = await startHarness();
    vault = await startFakeVault(h.broker);
    slack = await startFakeSlack(['tok-valid', 'xoxb-bot']);
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

  it('reply_in_thread: the channel name becomes an id, then chat.postMessage with thread_ts; list_messages leaves the reply out', async () => {
    const parent = await live({ action: 'post_message', input: { channel: 'general', text: 'Deploy at 5?' } });
    const ts = String(parent.output?.['ts']);
    const before = slack.requests.length;
    const res = await live({ action: 'reply_in_thread', input: { channel: 'general', thread_ts: ts, text: 'Yes, 5 it is' } });
    expect(res).toMatchObject({ outcome: 'complete', output: { channel: 'C01GENERAL', thread_ts: ts, text: 'Yes, 5 it is' } });
    expect(schemaErrors('reply_in_thread', res.output)).toBeNull();
    expect(sent(before)).toEqual(['GET /conversations.list', 'POST /chat.postMessage']);
    expect(slack.requests.at(-1)?.body).toEqual({ channel: 'C01GENERAL', text: 'Yes, 5 it is', thread_ts: ts });
    expect(vault.requests.at(-1)?.scopes).toEqual(['chat:write', 'channels:read', 'groups:read']);

    const listed = await live({ action: 'list_messages', input: { channel: 'general' } });
    expect((listed.output?.['items'] as { text: string }[]).map((m) => m.text)).toEqual(['Deploy at 5?']);
  });

  it('reply_in_thread with also_send_to_channel sends reply_broadcast: the reply shows in the channel too', async () => {
    const parent = await live({ action: 'post_message', input: { channel: 'C02RANDOM', text: 'Lunch?' } });
    const ts = String(parent.output?.['ts']);
    const before = slack.requests.length;
    const res = await live({
      action: 'reply_in_thread',
      input: { channel: 'C02RANDOM', thread_ts: ts, text: 'Pizza', also_send_to_channel: true },
    });
    expect(res).toMatchObject({ outcome: 'complete', output: { channel: 'C02RANDOM', thread_ts: ts } });
    // A channel id is taken as is.
    expect(sent(before)).toEqual(['POST /chat.postMessage']);
    expect(slack.requests.at(-1)?.body).toEqual({ channel: 'C02RANDOM', text: 'Pizza', thread_ts: ts, reply_broadcast: true });
    const listed = await live({ action: 'list_messages', input: { channel: 'random' } });
    expect((listed.output?.['items'] as { text: string }[]).map((m) => m.text)).toEqual(['Pizza', 'Lunch?']);
  });

  it('reply_in_thread to a ts Slack does not know (thread_not_found): step_failed naming the channel, with a suggestion', async () => {
    const res = await live({ action: 'reply_in_thread', input: { channel: 'general', thread_ts: '1600000000.000001', text: 'x' } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', tool: 'slack', recoverable: false } });
    expect(res.error?.message).toBe('Slack has no message at that thread_ts in #general to reply to (thread_not_found)');
    expect(res.error?.suggestion).toMatch(/ts of a message of that channel, as list_messages or search_messages answers it/);
  });

  it('reply_in_thread with a thread_ts that is not a Slack ts is refused before any call', async () => {
    const before = slack.requests.length;
    const res = await live({ action: 'reply_in_thread', input: { channel: 'general', thread_ts: 'yesterday', text: 'x' } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed' } });
    expect(res.error?.message).toMatch(/thread_ts/);
    expect(slack.requests.length).toBe(before);
  });

  it('search_messages: search.messages with the query, count and newest first; channel names, permalinks; asks for search:read', async () => {
    await live({ action: 'post_message', input: { channel: 'eng', text: 'Release notes for v2' } });
    await live({ action: 'post_message', input: { channel: 'general', text: 'release party friday' } });
    const before = slack.requests.length;
    const res = await live({ action: 'search_messages', input: { query: 'release in:#general', limit: 5 } });
    expect(res).toMatchObject({
      outcome: 'complete',
      output: { count: 1, items: [{ channel: 'general', user: 'U00ME', text: 'release party friday' }] },
    });
    expect(schemaErrors('search_messages', res.output)).toBeNull();
    expect(sent(before)).toEqual(['GET /search.messages']);
    expect(Object.fromEntries(slack.requests.at(-1)?.query ?? [])).toEqual({
      query: 'release in:#general',
      count: '5',
      sort: 'timestamp',
      sort_dir: 'desc',
    });
    const item = (res.output?.['items'] as { ts: string; permalink: string; time: string }[])[0];
    expect(item?.permalink).toBe(`https://acme-test.slack.com/archives/C01GENERAL/p${item?.ts.replace('.', '')}`);
    expect(item?.time).toBe('2024-03-09T16:00:00.000Z');
    expect(vault.requests.at(-1)?.scopes).toEqual(['search:read']);

    const both = await live({ action: 'search_messages', input: { query: 'release' } });
    expect((both.output?.['items'] as { channel: string }[]).map((m) => m.channel)).toEqual(['general', 'eng']);
  });

  it('search_messages with the app’s bot token (not_allowed_token_type): step_failed saying search takes only a user token', async () => {
    vault.answer = () => ({ status: 'ok', access_token: 'xoxb-bot' });
    const res = await live({ action: 'search_messages', input: { query: 'anything' } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', recoverable: false } });
    expect(res.error?.message).toMatch(/kind of token for this action \(not_allowed_token_type\)/);
    expect(res.error?.suggestion).toMatch(/only the user’s own token/);
  });

  it('search_messages without the scope (missing_scope): permission_denied naming search:read', async () => {
    slack.fail({ kind: 'insufficient_scope' }, 1);
    const res = await live({ action: 'search_messages', input: { query: 'anything' } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'permission_denied', recoverable: true } });
    expect(res.error?.suggestion).toContain('search:read');
  });
});

describe('slack threads and search with test keys (sandbox)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  const run = (s: StepInput) => runStep(h.step({ tool: 'slack', user_id: 'u_threads', ...s }), h.deps());

  it('reply_in_thread: replies to a stored post, once per step; list_messages shows only the parent and broadcast replies', async () => {
    const parent = await run({ action: 'post_message', input: { channel: 'general', text: 'Standup moved to 10' } });
    const ts = String(parent.output?.['ts']);
    const step = h.step({
      tool: 'slack',
      user_id: 'u_threads',
      action: 'reply_in_thread',
      input: { channel: 'general', thread_ts: ts, text: 'ok' },
    });
    const reply = await runStep(step, h.deps());
    expect(reply).toMatchObject({ outcome: 'complete', output: { channel: parent.output?.['channel'], thread_ts: ts, text: 'ok' } });
    expect(schemaErrors('reply_in_thread', reply.output)).toBeNull();
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
    expect((await runStep(step, h.deps())).output).toEqual(reply.output);

    // A reply's ts means its thread.
    const loud = await run({
      action: 'reply_in_thread',
      input: { channel: 'general', thread_ts: String(reply.output?.['ts']), text: 'see you there', also_send_to_channel: true },
    });
    expect(loud.output).toMatchObject({ thread_ts: ts });
    const listed = await run({ action: 'list_messages', input: { channel: 'general' } });
    expect((listed.output?.['items'] as { text: string }[]).map((m) => m.text)).toEqual(['see you there', 'Standup moved to 10']);
  });

  it('reply_in_thread to a ts that is not a post of that channel is refused like Slack (thread_not_found)', async () => {
    const missing = await run({ action: 'reply_in_thread', input: { channel: 'general', thread_ts: '1700000000.999999', text: 'x' } });
    expect(missing).toMatchObject({
      outcome: 'failed',
      error: { code: 'step_failed', message: expect.stringMatching(/thread_not_found/) },
    });
    expect(missing.error?.suggestion).toMatch(/list_messages/);
    const noChannel = await run({ action: 'reply_in_thread', input: { channel: 'nowhere', thread_ts: '1700000000.000001', text: 'x' } });
    expect(noChannel.error?.message).toMatch(/no channel #nowhere/);
  });

  it('search_messages: words, in:#channel, from:me, dates; thread replies are found too; newest first', async () => {
    const u = { user_id: 'u_search' };
    const p = await run({ ...u, action: 'post_message', input: { channel: 'eng', text: 'Deploy failed on api' } });
    await run({ ...u, action: 'post_message', input: { channel: 'general', text: 'deploy window is Friday' } });
    await run({ ...u, action: 'reply_in_thread', input: { channel: 'eng', thread_ts: String(p.output?.['ts']), text: 'Deploy fixed' } });
    const texts = async (query: string) => {
      const res = await run({ ...u, action: 'search_messages', input: { query } });
      expect(schemaErrors('search_messages', res.output)).toBeNull();
      return (res.output?.['items'] as { text: string }[]).map((m) => m.text);
    };
    expect(await texts('deploy')).toEqual(['Deploy fixed', 'deploy window is Friday', 'Deploy failed on api']);
    expect(await texts('deploy in:#eng')).toEqual(['Deploy fixed', 'Deploy failed on api']);
    expect(await texts('"window is" from:@me')).toEqual(['deploy window is Friday']);
    expect(await texts('deploy from:@alice')).toEqual([]);
    expect(await texts('deploy before:2020-01-01')).toEqual([]);
    const res = await run({ ...u, action: 'search_messages', input: { query: 'fixed', limit: 1 } });
    const item = (res.output?.['items'] as Record<string, string>[])[0];
    expect(item).toMatchObject({ channel: 'eng', user: 'U0SANDBOXME', text: 'Deploy fixed' });
    expect(item?.['permalink']).toMatch(/^https:\/\/sandbox\.tes\.invalid\/slack\/archives\/C\w+\/p1700000000\d{6}\?thread_ts=/);
  });
});
