import { BUILT_IN_TOOLS, findAction } from '@tes/catalog';
import fc from 'fast-check';
import { checkPlan } from './invariants.js';
import { planWithRules } from './rules.js';
import type { WorkflowStep } from './types.js';

/**
 * Invariant: a statement of what the user will do is not an instruction ("I'll merge after CI",
 * "we'll email them later"). Checked on generated variants, for the rules planner and for a plan
 * made elsewhere (the LLM planner's plans pass the same checks).
 */
const now = new Date('2026-03-04T10:00:00Z');

const OPENINGS = [
  "I'll",
  'I will',
  'i will',
  'I am going to',
  "I'm going to",
  "I'm gonna",
  "we'll",
  'We will',
  'we are going to',
  "we're going to",
  'I plan to',
  'we plan to',
  'I might',
  'I can',
  'we can',
  'I shall',
];
/** What the user says they will do, with the write it must never turn into. */
const DEEDS: { text: string; step: WorkflowStep }[] = [
  {
    text: 'merge PR 7 in acme/api',
    step: { tool: 'github', action: 'merge_pull_request', input: { owner: 'acme', repo: 'api', pull_number: 7 } },
  },
  {
    text: 'close issue 12 in acme/web',
    step: { tool: 'github', action: 'close_issue', input: { owner: 'acme', repo: 'web', issue_number: 12 } },
  },
  {
    text: 'email bob@acme.io about the invoice',
    step: { tool: 'gmail', action: 'send_email', input: { to: ['bob@acme.io'], subject: 'Invoice', body: 'about the invoice' } },
  },
  { text: 'post the notes to #eng', step: { tool: 'slack', action: 'post_message', input: { channel: 'eng', text: 'the notes' } } },
];
const TAILS = ['', ' later', ' tomorrow', ' after CI passes', ' once the review is done', ' myself'];

/** "I'll merge PR 7 in acme/api later", "we are going to close issue 12 in acme/web after CI passes". */
const statement = fc
  .tuple(fc.constantFrom(...OPENINGS), fc.constantFrom(...DEEDS), fc.constantFrom(...TAILS))
  .map(([opening, deed, tail]) => ({ text: `${opening} ${deed.text}${tail}`, deed }));

const writes = (prompt: string): string[] => {
  const outcome = planWithRules(prompt, { now });
  if (!outcome.ok) return [];
  return outcome.plan.steps.filter((s) => findAction(s.tool, s.action)?.side_effect !== 'read').map((s) => `${s.tool}.${s.action}`);
};

describe('intentions are not instructions', () => {
  it('a prompt that only states what the user will do plans no write and says why', () => {
    fc.assert(
      fc.property(statement, ({ text }) => {
        const outcome = planWithRules(text, { now });
        expect(writes(text)).toEqual([]);
        if (!outcome.ok) expect(outcome.refusal.suggestion).not.toBe('');
      }),
      { numRuns: 150, seed: 32 },
    );
  });

  it('a statement after a request does not add its action; the request is still planned', () => {
    fc.assert(
      fc.property(statement, fc.constantFrom(', ', '. ', ' - ', '; '), ({ text, deed }, sep) => {
        const prompt = `comment on PR 5 in acme/api: LGTM${sep}${text}`;
        const planned = writes(prompt);
        expect(planned).toContain('github.comment_on_pull_request');
        expect(planned.filter((w) => w === `${deed.step.tool}.${deed.step.action}`)).toHaveLength(
          deed.step.action === 'comment_on_pull_request' ? 1 : 0,
        );
      }),
      { numRuns: 150, seed: 7 },
    );
  });

  it('a plan made elsewhere that acts on a statement is refused by the checks', () => {
    fc.assert(
      fc.property(statement, ({ text, deed }) => {
        const refusal = checkPlan(text, [deed.step], BUILT_IN_TOOLS);
        expect(refusal?.code).toBe('unsupported_request');
      }),
      { numRuns: 150, seed: 11 },
    );
  });

  it('keeps the statement in the message it belongs to, and plans what was asked', () => {
    const outcome = planWithRules("comment on PR 7 in acme/api: LGTM, I'll merge after CI passes", { now });
    expect(outcome.ok && outcome.plan.steps).toEqual([
      {
        tool: 'github',
        action: 'comment_on_pull_request',
        input: { owner: 'acme', repo: 'api', pull_number: 7, body: "LGTM, I'll merge after CI passes" },
      },
    ]);
    const post = planWithRules("post in #releases: v2.3 is out. I'll email customers about it tomorrow", { now });
    expect(post.ok && post.plan.steps.map((s) => `${s.tool}.${s.action}`)).toEqual(['slack.post_message']);
    // A request to tell someone what the user will do is a request: the statement is its message.
    const tell = planWithRules('tell #eng we will ship on friday', { now });
    expect(tell.ok && tell.plan.steps[0]?.input).toMatchObject({ channel: 'eng', text: 'we will ship on friday' });
  });
});
