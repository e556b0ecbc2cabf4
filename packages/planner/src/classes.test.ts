import { findAction } from '@tes/catalog';
import { planWithRules } from './rules.js';
import type { WorkflowStep } from './types.js';

/**
 * The failure classes of the engine issue (#32), one block each, with requests written for these
 * tests (classes 2, 6 and 7 have files of their own: derived, languages, intentions). `now` is
 * Wednesday 2026-03-04 10:00 UTC.
 */
const now = new Date('2026-03-04T10:00:00Z');
const steps = (prompt: string): WorkflowStep[] => {
  const o = planWithRules(prompt, { now });
  if (!o.ok) throw new Error(`refused: ${o.refusal.code}: ${o.refusal.message}`);
  return o.plan.steps;
};
const actions = (prompt: string) => steps(prompt).map((s) => `${s.tool}.${s.action}`);
const writes = (prompt: string) => steps(prompt).filter((s) => findAction(s.tool, s.action)?.side_effect !== 'read');

describe('class 1: paraphrases of known actions', () => {
  it.each([
    ['stand up a channel for the q3 launch', ['slack.create_channel']],
    ['leave a note on PR 5 in acme/api saying looks good', ['github.comment_on_pull_request']],
    ['fire off a quick email to ana@x.io saying the build is green', ['gmail.send_email']],
    ['pencil in lunch with ana@x.io friday at noon', ['google_calendar.create_event']],
    ["retitle issue 9 in acme/api to 'Login broken on Safari'", ['github.update_issue']],
    ['nudge #ops that the backup failed', ['slack.post_message']],
    ["what's new in #support", ['slack.list_messages']],
    ['slap the needs-triage label on acme/infra issue 14', ['github.add_labels']],
    ['spin up a new private repo called invoice-parser under the globex org', ['github.create_repository']],
    ['grab the open PRs on acme/api', ['github.list_pull_requests']],
    ['make this all caps: ship it friday', ['text.uppercase']],
  ])('%s', (prompt, expected) => {
    expect(actions(prompt)).toEqual(expected);
  });

  it('keeps the idiom out of the message it carries', () => {
    expect(steps('nudge #ops that the deploy is done')[0]?.input).toEqual({ channel: 'ops', text: 'the deploy is done' });
    expect(steps('shoot a dm to @alex running late')[0]?.input).toEqual({ user: '@alex', text: 'running late' });
    expect(steps('let the team in #dev know the release is delayed')[0]?.input).toEqual({ channel: 'dev', text: 'the release is delayed' });
  });
});

describe('class 3: people named, not addressed', () => {
  it('sends a DM to a person named in lower case, the name kept out of the text', () => {
    expect(steps('dm bartek that the build is green')[0]?.input).toEqual({ user: 'bartek', text: 'the build is green' });
  });

  it('reads "her" as the one person the request named before', () => {
    const plan = steps('schedule a sync with kim@acme.io friday 11am and dm her the event link on slack');
    expect(plan[1]).toEqual({
      tool: 'slack',
      action: 'send_direct_message',
      input: { user: 'kim@acme.io', text: '{{steps.0.output.url}}' },
    });
  });

  it('refuses a DM to nobody in particular, naming the person as missing', () => {
    const o = planWithRules('dm the team that we are live', { now });
    expect(o.ok).toBe(false);
    if (!o.ok) expect(o.refusal.message).toMatch(/person/);
  });
});

describe('class 4: chains keep every clause and pass data along', () => {
  it('passes a created issue’s link to the page it is logged on', () => {
    expect(
      steps('file a bug in acme/infra about disk alerts on db-3 and log the link on notion page 77d0c3b1e2f94a58b6c7d8e9f0a1b2c3'),
    ).toEqual([
      { tool: 'github', action: 'create_issue', input: { owner: 'acme', repo: 'infra', title: 'Disk alerts on db-3' } },
      {
        tool: 'notion',
        action: 'append_to_page',
        input: { page_id: '77d0c3b1e2f94a58b6c7d8e9f0a1b2c3', content: '{{steps.0.output.url}}' },
      },
    ]);
  });

  it('posts an announcement that carries a link, without fetching the link', () => {
    expect(steps('announce in #general that v2 is live at https://acme.io/v2')).toEqual([
      { tool: 'slack', action: 'post_message', input: { channel: 'general', text: 'v2 is live at https://acme.io/v2' } },
    ]);
  });

  it('keeps every clause: a channel made, people invited, a post there; several numbers, one step each', () => {
    expect(steps("create a private channel called secret-project and invite @a and @b, then post 'welcome' there")).toEqual([
      { tool: 'slack', action: 'create_channel', input: { name: 'secret-project', is_private: true } },
      { tool: 'slack', action: 'invite_to_channel', input: { channel: 'secret-project', users: ['@a', '@b'] } },
      { tool: 'slack', action: 'post_message', input: { channel: 'secret-project', text: 'welcome' } },
    ]);
    expect(steps('close issues 4, 5 and 6 in acme/api').map((s) => s.input['issue_number'])).toEqual([4, 5, 6]);
    expect(steps("reopen #44 in acme/web and comment 'regression is back'")[1]?.input).toMatchObject({ issue_number: 44 });
  });

  it('never lets "but don\'t send it" or a quoted field into the message', () => {
    expect(steps("draft an email to bob@x.io saying the contract is ready, but don't send it")[0]?.input).toMatchObject({
      body: 'the contract is ready',
    });
    expect(steps('email ana@x.io and bob@x.io the link https://x.io/doc with subject Docs')[0]?.input).toEqual({
      to: ['ana@x.io', 'bob@x.io'],
      subject: 'Docs',
      body: 'the link https://x.io/doc',
    });
  });

  it('answers the email a search found, and refers to a fetched body', () => {
    expect(actions("find the latest email from billing@vendorco.com and reply 'paid, thx'")).toEqual([
      'gmail.search_email',
      'gmail.reply_to_email',
    ]);
    expect(
      steps('fetch https://x.io/r and open an issue in acme/web titled "Upgrade" with the response as the body')[1]?.input,
    ).toMatchObject({
      body: '{{steps.0.output.body}}',
    });
  });
});

describe('class 5: slots do not leak or drift', () => {
  it('reads a window of the past weeks from then on, not one day', () => {
    expect(steps('emails from bob@x.io in the past two weeks')[0]?.input).toEqual({ query: 'from:bob@x.io', after: '2026-02-18' });
  });

  it('places a time in the zone of the city named', () => {
    expect(steps('put dentist on my calendar march 12 at 8am LA time')[0]?.input).toMatchObject({
      start: '2026-03-12T08:00:00-07:00',
      time_zone: 'America/Los_Angeles',
    });
    expect(steps('block 2 hours for offsite planning on the 20th at 1pm Paris')[0]?.input).toMatchObject({
      start: '2026-03-20T13:00:00+01:00',
      end: '2026-03-20T15:00:00+01:00',
    });
  });

  it('reads "for 30 minutes" as a length, never as "in 30 minutes"', () => {
    expect(steps('book a call with ana@x.io for 30 minutes tomorrow at 2pm')[0]?.input).toMatchObject({
      start: '2026-03-05T14:00:00Z',
      end: '2026-03-05T14:30:00Z',
    });
  });

  it('repeats on the second Monday of every month, starting on the first one', () => {
    expect(steps("book 'Board review' the last friday of every month at 4pm")[0]?.input).toMatchObject({
      start: '2026-03-27T16:00:00Z',
      recurrence: ['RRULE:FREQ=MONTHLY;BYDAY=-1FR'],
    });
  });

  it('keeps filler words out of a search', () => {
    expect(steps('any mail from stripe this week?')[0]?.input).toMatchObject({ query: 'from:stripe', after: '2026-03-02' });
  });
});

describe('class 8: the catalog actions people ask for', () => {
  it('moves an event found by its time, keeping its day', () => {
    expect(steps('bump my 3pm to 4')).toEqual([
      {
        tool: 'google_calendar',
        action: 'list_events',
        input: { limit: 1, time_min: '2026-03-04T15:00:00Z', time_max: '2026-03-04T15:01:00.000Z' },
      },
      {
        tool: 'google_calendar',
        action: 'update_event',
        input: { event_id: '{{steps.0.output.items.0.id}}', start: '2026-03-04T16:00:00.000Z' },
      },
    ]);
  });

  it('cancels an event it can find, and refuses one it cannot name', () => {
    expect(actions('cancel my 3pm meeting tomorrow')).toEqual(['google_calendar.list_events', 'google_calendar.delete_event']);
    const o = planWithRules('cancel my meeting', { now });
    expect(!o.ok && o.refusal.message).toMatch(/which event/);
  });

  it('blocks days out of office', () => {
    expect(steps("I'm out of office from the 9th to the 13th, block my calendar")[0]).toEqual({
      tool: 'google_calendar',
      action: 'create_all_day_event',
      input: { summary: 'Out of office', start_date: '2026-03-09', end_date: '2026-03-13', out_of_office: true },
    });
  });

  it('replies in a Slack thread, searches Slack, forwards an email', () => {
    expect(steps('reply in the thread of the latest message in #support: on it')).toEqual([
      { tool: 'slack', action: 'list_messages', input: { channel: 'support', limit: 1 } },
      {
        tool: 'slack',
        action: 'reply_in_thread',
        input: { channel: 'support', thread_ts: '{{steps.0.output.items.0.ts}}', text: 'on it' },
      },
    ]);
    expect(steps("find messages mentioning 'rollback' in #ops")[0]).toEqual({
      tool: 'slack',
      action: 'search_messages',
      input: { query: 'rollback in:#ops' },
    });
    expect(actions('forward the latest email from billing@vendor.io to ap@acme.com')).toEqual([
      'gmail.search_email',
      'gmail.forward_email',
    ]);
    expect(writes('forward the latest email from billing@vendor.io to ap@acme.com')[0]?.input).toMatchObject({ to: ['ap@acme.com'] });
  });
});

describe('requests that wait, depend or need judgement are refused, questions are read', () => {
  it.each([
    'merge PR 12 in acme/api if the tests pass',
    "post 'deployed' to #eng after the deploy is done",
    'Fusiona el PR 12 en acme/api si pasan los tests',
    'Schließe Issue 12 in acme/webapp, wenn die Tests grün sind',
    'close issue 4 in acme/api unless someone objects',
    'decide whether to merge PR 4 in acme/api',
  ])('refuses "%s" with a suggestion', (prompt) => {
    const o = planWithRules(prompt, { now });
    expect(o.ok).toBe(false);
    if (!o.ok) expect(o.refusal.suggestion).not.toBe('');
  });

  it('reads a question about a condition, and keeps a condition inside a message', () => {
    expect(actions('see if PR 3 in acme/api is merged')).toEqual(['github.get_pull_request']);
    expect(actions('chek if im free on friday 10-11am')).toEqual(['google_calendar.check_availability']);
    expect(steps("post 'deploy at 5 if all goes well' to #eng")[0]?.input).toEqual({
      channel: 'eng',
      text: 'deploy at 5 if all goes well',
    });
  });
});

describe('found by the fresh sets of 2026-12-05: writes that must not land elsewhere', () => {
  it('closes only the issue asked, not the one it duplicates', () => {
    expect(steps('close #412 in acme/api, dupe of #398').map((s) => s.input['issue_number'])).toEqual([412]);
  });

  it('names a repository after "name it", never after a preposition', () => {
    expect(steps('new public repo under the orbit-oss org pls, name it telemetry-sdk')[0]?.input).toMatchObject({
      org: 'orbit-oss',
      name: 'telemetry-sdk',
    });
  });

  it('invites everyone listed, named or addressed', () => {
    expect(steps('add marco and joana.silva@acme.io to #proj-atlas')[0]?.input).toEqual({
      channel: 'proj-atlas',
      users: ['joana.silva@acme.io', 'marco'],
    });
  });

  it('refuses content it would have to make up, and a send held until later', () => {
    for (const prompt of [
      'post something fun in #general to cheer people up',
      "send this to ana@corp.com tomorrow at 8am sharp, not before: 'hi'",
    ]) {
      const o = planWithRules(prompt, { now });
      expect(o.ok).toBe(false);
    }
  });

  it('reads every label and a field of what a step found', () => {
    expect(steps('new issue in acme/web: "Safari button misaligned", labels bug + ui')[0]?.input).toMatchObject({ labels: ['bug', 'ui'] });
    expect(steps('Tag acme/infra#77 with needs-triage')[0]?.input).toMatchObject({ issue_number: 77, labels: ['needs-triage'] });
    expect(
      steps('Find the last email from ops@initech.com and open a GitHub issue in acme/support with its subject as the title')[1]?.input,
    ).toMatchObject({
      title: '{{steps.0.output.items.0.subject}}',
    });
  });
});
