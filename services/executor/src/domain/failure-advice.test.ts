import { findAction } from '@tes/catalog';
import { compile, compileDynamic } from '@tes/contracts';
import {
  fallbackAdvice,
  fieldWords,
  inputAdvice,
  notFoundAdvice,
  rateLimitAdvice,
  referenceAdvice,
  rejectedAdvice,
  targetsOf,
  timeoutAdvice,
} from './failure-advice.js';

/** The advice for `input` checked against the built-in action's schema, as the executor checks it. */
function adviceFor(tool: string, action: string, input: Record<string, unknown>): string {
  const schema = findAction(tool, action)?.input;
  if (!schema) throw new Error(`no ${tool}.${action}`);
  const check = compile(schema);
  expect(check(input)).toBe(false);
  return inputAdvice(check.errors, input, schema);
}

describe('inputAdvice: what to add to the request, never the field name', () => {
  it.each([
    ['github', 'create_issue', { owner: 'acme', title: 'Bug' }, 'Name the repository as owner/name, e.g. "acme/webapp"'],
    ['gmail', 'send_email', { to: ['bob@example.com'], body: 'Agenda to follow' }, 'Add a subject, e.g. with the subject "Q2 offsite"'],
    ['gmail', 'send_email', { subject: 'Hi', body: 'x' }, 'Give the recipient\'s email address, e.g. "to bob@example.com"'],
    ['gmail', 'send_email', { to: ['bob@example.com'], subject: 'Hi' }, 'Say what it should say, e.g. saying "Agenda to follow"'],
    ['slack', 'post_message', { text: 'hi' }, 'Name the channel, e.g. "#general"'],
    ['github', 'comment_on_issue', { owner: 'a', repo: 'b', body: 'x' }, 'Give the issue number, e.g. "issue #12"'],
  ] as const)('%s.%s with a field missing', (tool, action, input, advice) => {
    expect(adviceFor(tool, action, { ...input })).toBe(advice);
  });

  it('an empty subject asks for a subject, as a missing one does', () => {
    expect(adviceFor('gmail', 'send_email', { to: ['b@example.com'], subject: '', body: 'x' })).toMatch(/^Add a subject/);
  });

  it('a value that does not fit says which value and what is expected', () => {
    expect(adviceFor('gmail', 'send_email', { to: ['bob'], subject: 's', body: 'b' })).toBe(
      '"bob" is not an email address. Give the recipient\'s email address, e.g. "to bob@example.com"',
    );
    expect(adviceFor('github', 'get_repository', { owner: 'acme webapp', repo: 'x' })).toBe(
      '"acme webapp" is not a valid repository. Name the repository as owner/name, e.g. "acme/webapp"',
    );
    expect(adviceFor('github', 'list_issues', { owner: 'a', repo: 'b', state: 'done' })).toBe(
      'Use one of open, closed or all for the state',
    );
    expect(adviceFor('github', 'comment_on_issue', { owner: 'a', repo: 'b', issue_number: 0, body: 'x' })).toMatch(
      /^Issue number 0 is out of range \(>= 1\)\. Give the issue number/,
    );
  });

  it('an uncommon field is worded from its schema description, else from its name made readable', () => {
    const schema = {
      type: 'object',
      properties: { ticket_ref: { type: 'string', description: 'Ticket reference in the tracker' }, dueDate: { type: 'string' } },
      required: ['ticket_ref', 'dueDate'],
    };
    expect(fieldWords('ticket_ref', schema)).toEqual({
      label: 'ticket reference in the tracker',
      say: 'Give the ticket reference in the tracker',
    });
    expect(fieldWords('dueDate', schema).say).toBe('Give the due date');
    const check = compileDynamic(schema);
    expect(check({ ticket_ref: 'T-1' })).toBe(false);
    expect(inputAdvice(check.errors, { ticket_ref: 'T-1' }, schema)).toBe('Give the due date');
  });

  it('"at least one of" lists every choice', () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' }, body: { type: 'string' }, assignees: { type: 'array' } },
      anyOf: [{ required: ['title'] }, { required: ['body'] }, { required: ['assignees'] }],
    };
    const check = compileDynamic(schema);
    expect(check({})).toBe(false);
    expect(inputAdvice(check.errors, {}, schema)).toBe('Say at least one of: the title, the text or the assignees');
  });

  it('a field the action does not take is named to be left out', () => {
    expect(adviceFor('slack', 'post_message', { channel: 'c', text: 't', colour: 'red' })).toBe(
      'Leave out "colour": this action does not take it',
    );
  });
});

describe('what a failure concerns, as the user names it', () => {
  const gh = { tool: 'github', action: 'comment_on_issue' };

  it('names the repository, the issue, the channel and ids with their words', () => {
    expect(targetsOf({ owner: 'acme', repo: 'api', issue_number: 3, body: 'x' }, {})).toEqual(['the repository acme/api', 'issue #3']);
    expect(targetsOf({ channel: 'general', text: 'x' }, {})).toEqual(['the channel #general']);
    expect(targetsOf({ channel: 'C01GENERAL' }, {})).toEqual(['the channel C01GENERAL']);
    expect(targetsOf({ database_id: 'db1', filter_text: 'x' }, {})).toEqual(['the Notion database "db1"']);
  });

  it('404: which thing, to check its name and that the connected account can see it', () => {
    expect(notFoundAdvice(gh, { owner: 'acme', repo: 'api', issue_number: 3, body: 'x' }, 'GitHub')).toBe(
      'Check that the repository acme/api and issue #3 exist, that their names are spelled right, and that the connected GitHub account can see them',
    );
    expect(notFoundAdvice({ tool: 'slack', action: 'post_message' }, { channel: '#launch', text: 'x' }, 'Slack')).toBe(
      'Check that the channel #launch exists, that its name is spelled right, and that the connected Slack account can see it',
    );
    expect(notFoundAdvice({ tool: 'notion', action: 'get_page' }, { page_id: 'p1' }, 'Notion', 'access to the page')).toMatch(
      /the Notion page "p1" exists.*\(Notion needs access to the page\)$/,
    );
  });

  it('409 and 422: a conflict is to be looked at and retried; a rejection quotes the provider and asks for a change', () => {
    expect(rejectedAdvice(gh, { owner: 'acme', repo: 'api', issue_number: 3 }, 'GitHub', true)).toMatch(
      /^GitHub reports a conflict with the current state for the repository acme\/api and issue #3 .*then retry the task$/,
    );
    expect(rejectedAdvice(gh, { owner: 'acme', repo: 'api' }, 'GitHub', false, 'Validation Failed')).toBe(
      'GitHub did not accept the request for the repository acme/api (it says: "Validation Failed"): correct the details in the request and create the task again',
    );
  });

  it('an unresolved reference asks for the value in the request itself', () => {
    const schema = findAction('github', 'comment_on_issue')?.input ?? {};
    expect(referenceAdvice('issue_number', schema)).toBe(
      'An earlier step\'s result has no issue number to use here; name it in the request instead. Give the issue number, e.g. "issue #12"',
    );
  });
});

describe('retry advice', () => {
  it('rate limits say when to retry, in seconds, minutes or hours', () => {
    expect(rateLimitAdvice('GitHub', 120_000)).toBe('GitHub limits how many requests it accepts; retry the task after 2 minutes');
    expect(rateLimitAdvice('Slack', 30_000)).toMatch(/after 30 s$/);
    expect(rateLimitAdvice('Slack', 3 * 3600_000)).toMatch(/after 3 hours$/);
    expect(rateLimitAdvice('Slack', undefined)).toMatch(/in a minute$/);
  });

  it('a timeout of a write warns that it may have taken effect; of a read, not', () => {
    expect(timeoutAdvice({ tool: 'slack', action: 'post_message', timeout_ms: 30_000 }, 'Slack')).toBe(
      'Slack took longer than 30 s to answer; it may have taken effect, so check Slack before retrying the task',
    );
    expect(timeoutAdvice({ tool: 'slack', action: 'list_channels', timeout_ms: 30_000 }, 'Slack')).toBe(
      'Slack took longer than 30 s to answer; retry the task',
    );
  });

  it('a failure without advice gets one by its code; "not found" names the targets', () => {
    const step = { tool: 'github', action: 'comment_on_issue', timeout_ms: 1000 };
    const input = { owner: 'acme', repo: 'api', issue_number: 9 };
    expect(fallbackAdvice({ code: 'step_failed', message: 'GitHub: not found (issue #9 in acme/api)' }, step, input, 'GitHub')).toMatch(
      /^Check that the repository acme\/api and issue #9 exist/,
    );
    expect(fallbackAdvice({ code: 'service_unavailable', message: 'x' }, step, input, 'the web server')).toBe(
      'The web server is not answering right now; retry the task in a few minutes',
    );
    expect(fallbackAdvice({ code: 'auth_token_expired', message: 'x' }, step, input, 'GitHub')).toMatch(/^Reconnect GitHub/);
    expect(fallbackAdvice({ code: 'step_failed', message: 'boom' }, step, input, 'GitHub')).toMatch(/^Check the details in the request/);
  });
});
