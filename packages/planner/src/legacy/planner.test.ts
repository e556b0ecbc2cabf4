import { BUILT_IN_TOOLS, findAction, withoutReferencedFields } from '@tes/catalog';
import { compile } from '@tes/contracts';
import { planWorkflow, planWorkflowDetailed, selectTool } from './planner.js';
import { whenOf } from './planner-text.js';

/** Wednesday 12 March 2025, 10:00 UTC: every relative date below resolves against it. */
const NOW = new Date('2025-03-12T10:00:00Z');

interface Row {
  prompt: string;
  tool: string | undefined;
  /** "tool.action" of every step, in order; or the number of steps for long loops. */
  steps: string[] | { count: number; each: string };
  /** Key arguments of some steps, by index (partial match). */
  args?: Record<number, Record<string, unknown>>;
}

const TABLE: Row[] = [
  // ---- single actions: text and data ----
  { prompt: 'Echo "hi there"', tool: 'text', steps: ['text.echo'], args: { 0: { text: 'hi there' } } },
  { prompt: 'uppercase "abc"', tool: 'text', steps: ['text.uppercase'], args: { 0: { text: 'abc' } } },
  { prompt: 'Lowercase "HELLO World"', tool: 'text', steps: ['text.lowercase'], args: { 0: { text: 'HELLO World' } } },
  {
    prompt: 'Count the words in "the quick brown fox"',
    tool: 'text',
    steps: ['text.count_words'],
    args: { 0: { text: 'the quick brown fox' } },
  },
  { prompt: 'zzz qqq', tool: undefined, steps: [] },
  // ---- GitHub ----
  {
    prompt: 'Create an issue titled "Login fails on Safari" in acme/api',
    tool: 'github',
    steps: ['github.create_issue'],
    args: { 0: { owner: 'acme', repo: 'api', title: 'Login fails on Safari' } },
  },
  {
    prompt: 'Open a new issue in acme/web called "Broken footer" with the body "The footer overlaps on mobile" and label "bug"',
    tool: 'github',
    steps: ['github.create_issue'],
    args: { 0: { owner: 'acme', repo: 'web', title: 'Broken footer', body: 'The footer overlaps on mobile', labels: ['bug'] } },
  },
  {
    prompt: 'Report a bug in acme/api: "Crash on start"',
    tool: 'github',
    steps: ['github.create_issue'],
    args: { 0: { title: 'Crash on start' } },
  },
  {
    prompt: 'List the last 5 issues in acme/api',
    tool: 'github',
    steps: ['github.list_issues'],
    args: { 0: { owner: 'acme', repo: 'api', limit: 5 } },
  },
  {
    prompt: 'Show closed issues in acme/api labeled "bug"',
    tool: 'github',
    steps: ['github.list_issues'],
    args: { 0: { state: 'closed', labels: ['bug'] } },
  },
  {
    prompt: 'Find the five most recent open issues in octo-org/hello.world',
    tool: 'github',
    steps: ['github.list_issues'],
    args: { 0: { owner: 'octo-org', repo: 'hello.world', state: 'open', limit: 5 } },
  },
  {
    prompt: 'Comment "Looking into it" on issue #42 in acme/api',
    tool: 'github',
    steps: ['github.comment_on_issue'],
    args: { 0: { issue_number: 42, body: 'Looking into it' } },
  },
  {
    prompt: 'Add the labels "bug" and "urgent" to issue #7 in acme/api',
    tool: 'github',
    steps: ['github.add_labels'],
    args: { 0: { issue_number: 7, labels: ['bug', 'urgent'] } },
  },
  {
    prompt: 'Label issue #9 in acme/api as "wontfix"',
    tool: 'github',
    steps: ['github.add_labels'],
    args: { 0: { issue_number: 9, labels: ['wontfix'] } },
  },
  {
    prompt: 'Tell me about the repository acme/api',
    tool: 'github',
    steps: ['github.get_repository'],
    args: { 0: { owner: 'acme', repo: 'api' } },
  },
  // ---- Slack ----
  {
    prompt: 'Post "Deploy finished" to #eng',
    tool: 'slack',
    steps: ['slack.post_message'],
    args: { 0: { channel: 'eng', text: 'Deploy finished' } },
  },
  {
    prompt: 'Send a message to #general saying "Lunch is here"',
    tool: 'slack',
    steps: ['slack.post_message'],
    args: { 0: { channel: 'general', text: 'Lunch is here' } },
  },
  {
    prompt: 'Send "Build is green" to #ci',
    tool: 'slack',
    steps: ['slack.post_message'],
    args: { 0: { channel: 'ci', text: 'Build is green' } },
  },
  {
    prompt: 'Post Release 1.2 is out to #announcements',
    tool: 'slack',
    steps: ['slack.post_message'],
    args: { 0: { channel: 'announcements', text: 'Release 1.2 is out' } },
  },
  { prompt: 'List the Slack channels', tool: 'slack', steps: ['slack.list_channels'] },
  // ---- Google Calendar (dates against NOW) ----
  {
    prompt: 'Schedule a meeting with alice@example.com tomorrow at 3pm for 30 minutes',
    tool: 'google_calendar',
    steps: ['google_calendar.create_event'],
    args: { 0: { start: '2025-03-13T15:00:00Z', end: '2025-03-13T15:30:00Z', attendees: ['alice@example.com'] } },
  },
  {
    prompt: 'Create a calendar event "Design review" on 2025-03-20 from 2pm to 4pm',
    tool: 'google_calendar',
    steps: ['google_calendar.create_event'],
    args: { 0: { summary: 'Design review', start: '2025-03-20T14:00:00Z', end: '2025-03-20T16:00:00Z' } },
  },
  {
    prompt: 'Book a 45-minute call with dana@example.com on March 20 at 9:30am',
    tool: 'google_calendar',
    steps: ['google_calendar.create_event'],
    args: { 0: { start: '2025-03-20T09:30:00Z', end: '2025-03-20T10:15:00Z', attendees: ['dana@example.com'] } },
  },
  {
    prompt: 'Schedule "1:1 with Dana" on friday at 10am',
    tool: 'google_calendar',
    steps: ['google_calendar.create_event'],
    args: { 0: { summary: '1:1 with Dana', start: '2025-03-14T10:00:00Z' } },
  },
  {
    prompt: 'Add "Launch" to my calendar at 2025-04-02T16:30:00Z',
    tool: 'google_calendar',
    steps: ['google_calendar.create_event'],
    args: { 0: { summary: 'Launch', start: '2025-04-02T16:30:00Z' } },
  },
  {
    prompt: "What's on my calendar tomorrow?",
    tool: 'google_calendar',
    steps: ['google_calendar.list_events'],
    args: { 0: { time_min: '2025-03-13T00:00:00Z', time_max: '2025-03-14T00:00:00Z' } },
  },
  {
    prompt: 'List my meetings on 2025-04-01',
    tool: 'google_calendar',
    steps: ['google_calendar.list_events'],
    args: { 0: { time_min: '2025-04-01T00:00:00Z', time_max: '2025-04-02T00:00:00Z' } },
  },
  {
    prompt: 'Show my events this week',
    tool: 'google_calendar',
    steps: ['google_calendar.list_events'],
    args: { 0: { time_min: '2025-03-12T10:00:00Z', time_max: '2025-03-17T00:00:00Z' } },
  },
  // ---- Gmail ----
  {
    prompt: 'Send an email to bob@example.com with subject "Report" saying "The report is attached"',
    tool: 'gmail',
    steps: ['gmail.send_email'],
    args: { 0: { to: ['bob@example.com'], subject: 'Report', body: 'The report is attached' } },
  },
  {
    prompt: 'Email carol@example.com and cc dave@example.com "Lunch at noon?"',
    tool: 'gmail',
    steps: ['gmail.send_email'],
    args: { 0: { to: ['carol@example.com'], cc: ['dave@example.com'], body: 'Lunch at noon?' } },
  },
  {
    prompt: 'Search my email for invoices from billing@vendor.com',
    tool: 'gmail',
    steps: ['gmail.search_email'],
    args: { 0: { query: 'invoices from:billing@vendor.com' } },
  },
  {
    prompt: 'Find my last 10 emails from alice@example.com',
    tool: 'gmail',
    steps: ['gmail.search_email'],
    args: { 0: { query: 'from:alice@example.com', limit: 10 } },
  },
  { prompt: 'Search gmail for unread messages', tool: 'gmail', steps: ['gmail.search_email'], args: { 0: { query: 'is:unread' } } },
  // ---- Notion ----
  {
    prompt: 'Create a Notion page titled "Meeting notes" in database tasks',
    tool: 'notion',
    steps: ['notion.create_page'],
    args: { 0: { parent_id: 'tasks', title: 'Meeting notes' } },
  },
  {
    prompt: 'Create a page in notion database 0f1e2d3c4b5a69788796a5b4c3d2e1f0 titled "Retro" with content "Went well: everything"',
    tool: 'notion',
    steps: ['notion.create_page'],
    args: { 0: { parent_id: '0f1e2d3c4b5a69788796a5b4c3d2e1f0', title: 'Retro', content: 'Went well: everything' } },
  },
  {
    prompt: 'Query the notion database roadmap for "Q3"',
    tool: 'notion',
    steps: ['notion.query_database'],
    args: { 0: { database_id: 'roadmap', filter_text: 'Q3' } },
  },
  // ---- HTTP ----
  {
    prompt: 'Fetch https://example.com/data.json',
    tool: 'http',
    steps: ['http.fetch'],
    args: { 0: { url: 'https://example.com/data.json' } },
  },
  {
    prompt: 'POST {"event":"deploy"} to https://hooks.example.com/deploy',
    tool: 'http',
    steps: ['http.post'],
    args: { 0: { url: 'https://hooks.example.com/deploy', json: { event: 'deploy' } } },
  },
  // ---- sequences and references ----
  {
    prompt: 'Create an issue titled "Flaky test" in acme/api then list issues in acme/api',
    tool: 'github',
    steps: ['github.create_issue', 'github.list_issues'],
    args: { 0: { title: 'Flaky test' }, 1: { owner: 'acme', repo: 'api' } },
  },
  {
    prompt: 'Create an issue titled "Flaky test" in acme/api, then list the issues',
    tool: 'github',
    steps: ['github.create_issue', 'github.list_issues'],
    args: { 1: { owner: 'acme', repo: 'api' } },
  },
  {
    prompt: 'Find the open issues in acme/api then post them to #eng',
    tool: 'github',
    steps: ['github.list_issues', 'slack.post_message'],
    args: { 0: { state: 'open' }, 1: { channel: 'eng', text: '{{steps.0.output.items}}' } },
  },
  {
    prompt: 'List issues in acme/api and then count them',
    tool: 'github',
    steps: ['github.list_issues', 'data.count'],
    args: { 1: { items: '{{steps.0.output.items}}' } },
  },
  {
    prompt: 'Create an issue titled "Crash" in acme/api and label it "bug"',
    tool: 'github',
    steps: ['github.create_issue', 'github.add_labels'],
    args: { 1: { issue_number: '{{steps.0.output.number}}', labels: ['bug'] } },
  },
  {
    prompt: 'Create an issue titled "X" in acme/api then comment "y" on it then label it "bug"',
    tool: 'github',
    steps: ['github.create_issue', 'github.comment_on_issue', 'github.add_labels'],
    args: { 1: { issue_number: '{{steps.0.output.number}}', body: 'y' }, 2: { issue_number: '{{steps.0.output.number}}' } },
  },
  {
    prompt: 'Post the open issues of acme/api to #eng',
    tool: 'github',
    steps: ['github.list_issues', 'slack.post_message'],
    args: { 1: { channel: 'eng', text: '{{steps.0.output.items}}' } },
  },
  {
    prompt: 'Email the list of my events for tomorrow to bob@example.com',
    tool: 'google_calendar',
    steps: ['google_calendar.list_events', 'gmail.send_email'],
    args: { 0: { time_min: '2025-03-13T00:00:00Z' }, 1: { to: ['bob@example.com'], body: '{{steps.0.output.items}}' } },
  },
  {
    prompt: 'Fetch https://example.com/status and post it to #ops',
    tool: 'slack',
    steps: ['http.fetch', 'slack.post_message'],
    args: { 1: { channel: 'ops', text: '{{steps.0.output.body}}' } },
  },
  {
    prompt: 'Uppercase the text "make it loud" then post it to #random',
    tool: 'slack',
    steps: ['text.uppercase', 'slack.post_message'],
    args: { 1: { text: '{{steps.0.output.text}}' } },
  },
  {
    prompt: 'List closed issues in acme/web with label "regression" then post "Regressions:" with them to #qa',
    tool: 'github',
    steps: ['github.list_issues', 'slack.post_message'],
    args: { 0: { labels: ['regression'], state: 'closed' }, 1: { channel: 'qa', text: 'Regressions: {{steps.0.output.items}}' } },
  },
  {
    prompt: 'Post the latest 3 issues in acme/api to #eng then email them to lead@acme.io',
    tool: 'github',
    steps: ['github.list_issues', 'slack.post_message', 'gmail.send_email'],
    args: { 0: { limit: 3 }, 2: { to: ['lead@acme.io'], body: '{{steps.0.output.items}}' } },
  },
  {
    prompt: 'Get the repo info for acme/api then email it to cto@acme.io',
    tool: 'github',
    steps: ['github.get_repository', 'gmail.send_email'],
    args: { 1: { to: ['cto@acme.io'], body: '{{steps.0.output}}' } },
  },
  {
    prompt: 'Search emails about "offsite" then create a notion page titled "Offsite" in database notes with them',
    tool: 'gmail',
    steps: ['gmail.search_email', 'notion.create_page'],
    args: { 1: { parent_id: 'notes', title: 'Offsite', content: '{{steps.0.output.items}}' } },
  },
  // ---- for each ----
  {
    prompt: 'For each repo in acme/api, acme/web and acme/cli, create an issue titled "Upgrade Node"',
    tool: 'github',
    steps: ['github.create_issue', 'github.create_issue', 'github.create_issue'],
    args: { 0: { repo: 'api', title: 'Upgrade Node' }, 1: { repo: 'web' }, 2: { repo: 'cli' } },
  },
  {
    prompt: 'Post "Standup in 5" to each of #eng, #ops and #design',
    tool: 'slack',
    steps: ['slack.post_message', 'slack.post_message', 'slack.post_message'],
    args: { 0: { channel: 'eng' }, 2: { channel: 'design', text: 'Standup in 5' } },
  },
  {
    prompt:
      'For each of alice@example.com, bob@example.com and carol@example.com, send an email with subject "Welcome" saying "Glad to have you"',
    tool: 'gmail',
    steps: ['gmail.send_email', 'gmail.send_email', 'gmail.send_email'],
    args: { 1: { to: ['bob@example.com'], subject: 'Welcome', body: 'Glad to have you' } },
  },
  { prompt: 'Echo "hi" 3 times', tool: 'text', steps: ['text.echo', 'text.echo', 'text.echo'], args: { 2: { text: 'hi' } } },
  {
    prompt: 'For each number from 1 to 60, echo it',
    tool: 'text',
    steps: { count: 60, each: 'text.echo' },
    args: { 0: { text: '1' }, 59: { text: '60' } },
  },
  {
    prompt: 'For each of the last 5 issues in acme/api, add the label "triage"',
    tool: 'github',
    steps: ['github.list_issues', ...Array<string>(5).fill('github.add_labels')],
    args: {
      0: { limit: 5 },
      1: { issue_number: '{{steps.0.output.items.0.number}}', labels: ['triage'] },
      5: { issue_number: '{{steps.0.output.items.4.number}}' },
    },
  },
  {
    prompt: 'For each open issue in acme/api, comment "Please triage"',
    tool: 'github',
    steps: ['github.list_issues', ...Array<string>(10).fill('github.comment_on_issue')],
    args: { 0: { state: 'open', limit: 10 }, 10: { issue_number: '{{steps.0.output.items.9.number}}', body: 'Please triage' } },
  },
  {
    prompt: 'List the last 3 channels then post "hello" to each of them',
    tool: 'slack',
    steps: ['slack.list_channels', 'slack.post_message', 'slack.post_message', 'slack.post_message'],
    args: { 0: { limit: 3 }, 3: { channel: '{{steps.0.output.items.2.id}}', text: 'hello' } },
  },
  {
    prompt: 'For each of the last 3 emails from boss@corp.com, create an issue in acme/api',
    tool: 'gmail',
    steps: ['gmail.search_email', 'github.create_issue', 'github.create_issue', 'github.create_issue'],
    args: { 0: { query: 'from:boss@corp.com', limit: 3 }, 1: { repo: 'api', title: '{{steps.0.output.items.0.subject}}' } },
  },
  {
    prompt: 'For each of the 60 most recent issues in acme/api, add the label "old"',
    tool: 'github',
    steps: { count: 61, each: 'github.add_labels' },
  },
];

function shape(steps: { tool: string; action: string }[]): string[] {
  return steps.map((s) => `${s.tool}.${s.action}`);
}

describe('deterministic planner', () => {
  it('has a table of at least 40 prompts', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
  });

  it.each(TABLE.map((r) => [r.prompt, r] as const))('plans %s', (_prompt, row) => {
    const tool = selectTool(row.prompt);
    expect(tool?.name).toBe(row.tool);
    const { steps } = planWorkflowDetailed(row.prompt, tool, { now: NOW });
    if (Array.isArray(row.steps)) expect(shape(steps)).toEqual(row.steps);
    else {
      expect(steps).toHaveLength(row.steps.count);
      expect(shape(steps).slice(-1)[0]).toBe(row.steps.each);
    }
    for (const [i, args] of Object.entries(row.args ?? {})) expect(steps[Number(i)]?.input).toMatchObject(args);
  });

  it('plans inputs that satisfy the catalog schemas once references are set aside', () => {
    for (const row of TABLE) {
      const { steps, problems } = planWorkflowDetailed(row.prompt, selectTool(row.prompt), { now: NOW });
      if (row.tool === undefined) continue;
      expect({ prompt: row.prompt, problems }).toEqual({ prompt: row.prompt, problems: [] });
      for (const s of steps) {
        const def = findAction(s.tool, s.action);
        const { schema, input } = withoutReferencedFields(def?.input ?? {}, s.input);
        const check = compile(schema);
        expect({ prompt: row.prompt, step: s, ok: check(structuredClone(input)), errors: check.errors ?? null }).toMatchObject({
          ok: true,
        });
      }
    }
  });

  it('names what it could not fill in', () => {
    const { steps, problems } = planWorkflowDetailed(
      'Create an issue titled "No repo given"',
      selectTool('Create an issue titled "No repo given"'),
      { now: NOW },
    );
    expect(shape(steps)).toEqual(['github.create_issue']);
    expect(problems).toEqual(['step 0 (github.create_issue): owner is missing', 'step 0 (github.create_issue): repo is missing']);
  });

  it('a loop over more than 50 items yields more than 50 steps (the orchestrator then fails the task)', () => {
    const steps = planWorkflow('For each number from 1 to 60, echo it', selectTool('x echo'), NOW);
    expect(steps.length).toBeGreaterThan(50);
  });

  it('caps a loop at 1000 items, and a whole plan at 1000 steps', () => {
    expect(planWorkflow('For each number from 1 to 1000000, echo it', undefined, NOW)).toHaveLength(1000);
    const many = planWorkflowDetailed('For each number from 1 to 900, echo it then '.repeat(200), undefined, { now: NOW });
    expect(many.steps).toHaveLength(1000);
    expect(many.problems).toContain('the prompt expands to more than 1000 steps; planning stopped there');
  });

  it('ignores keywords inside quotes', () => {
    expect(selectTool('Echo "post this issue to #eng in acme/api"')?.name).toBe('text');
  });

  it.each([
    ['tomorrow 2-3pm', { start: '2025-03-13T14:00:00.000Z', end: '2025-03-13T15:00:00.000Z' }],
    ['the day after tomorrow at noon', { start: '2025-03-14T12:00:00.000Z' }],
    ['in 2 hours', { start: '2025-03-12T12:00:00.000Z' }],
    ['on 20 March 2026 at 8:15 am for an hour', { start: '2026-03-20T08:15:00.000Z', end: '2026-03-20T09:15:00.000Z' }],
    ['on January 5 at 9', { start: '2026-01-05T09:00:00.000Z' }],
    ['monday at 4', { start: '2025-03-17T16:00:00.000Z' }],
    ['tonight', { start: '2025-03-12T19:00:00.000Z' }],
    ['next week', { range: { min: '2025-03-17T00:00:00.000Z', max: '2025-03-24T00:00:00.000Z' } }],
    ['the next 3 days', { range: { min: '2025-03-12T10:00:00.000Z', max: '2025-03-15T10:00:00.000Z' } }],
    ['2025-06-01T08:00:00+02:00', { start: '2025-06-01T06:00:00.000Z' }],
  ])('reads "%s" against now', (text, expected) => {
    expect(JSON.parse(JSON.stringify(whenOf(text, NOW)))).toMatchObject(expected);
  });

  it('resolves a bare time already past today to tomorrow', () => {
    const [step] = planWorkflow('Schedule a sync at 9am', undefined, NOW);
    expect(step?.input).toMatchObject({ start: '2025-03-13T09:00:00Z' });
  });

  it.each([
    ['a service tool first', `Create an issue titled "x" in acme/api then ${'post "y" to #eng then '.repeat(400)}echo "done"`],
    ['no service tool at all', `${'echo "y" then '.repeat(700)}echo "done"`],
    ['one long clause', `Post ${'word '.repeat(1990)} to #eng`],
  ])('selects fast: a 10,000-character prompt with %s in well under 50 ms', (_what, long) => {
    const prompt = long.slice(0, 10_000);
    selectTool(prompt);
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      selectTool(prompt);
      best = Math.min(best, performance.now() - t);
    }
    expect(best).toBeLessThan(50);
  });

  it('every catalog schema compiles', () => {
    for (const tool of BUILT_IN_TOOLS) for (const a of tool.actions) expect(() => [compile(a.input), compile(a.output)]).not.toThrow();
  });
});
