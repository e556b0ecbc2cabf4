import { BUILT_IN_TOOLS } from '@tes/catalog';
import { join } from 'node:path';
import { CATEGORIES, loadCorpus } from './corpus.js';
import {
  mismatch,
  planMismatch,
  score,
  unaskedSideEffects,
  expectedSteps,
  type CorpusEntry,
  type PlannedStep,
  type SideEffectOf,
} from './score.js';
import { scriptFor } from './scripted-model.js';

const effects: Record<string, 'read' | 'write' | 'destructive'> = {
  'gmail.send_email': 'write',
  'gmail.create_draft': 'write',
  'gmail.search_email': 'read',
  'slack.post_message': 'write',
  'github.list_issues': 'read',
  'github.merge_pull_request': 'destructive',
};
const sideEffectOf: SideEffectOf = (a) => effects[a];
const step = (name: string, input: Record<string, unknown> = {}): PlannedStep => {
  const [tool = '', action = ''] = name.split('.');
  return { tool, action, input };
};
const entry = (expect: CorpusEntry['expect']): CorpusEntry => ({ id: 't-1', category: 'gmail', lang: 'en', prompt: 'p', expect });

describe('mismatch', () => {
  it('$contains wants every word, case-insensitively, in a string', () => {
    expect(mismatch({ $contains: 'Happy Friday' }, 'happy friday everyone')).toBeUndefined();
    expect(mismatch({ $contains: ['staging', 'down'] }, 'staging is up')).toMatch(/lacks \["down"\]/);
    expect(mismatch({ $contains: 'a message' }, 42)).toMatch(/expected text/);
  });

  it('$ref wants a {{steps.N.output…}} reference', () => {
    expect(mismatch({ $ref: true }, 'PRs: {{steps.0.output.items}}')).toBeUndefined();
    expect(mismatch({ $ref: true }, 'acme/webapp (https://github.com/acme/webapp)')).toMatch(/reference/);
  });

  it('$oneOf accepts any alternative, $absent only a missing field', () => {
    const label = { state: { $oneOf: ['open', { $absent: true }] } };
    expect(mismatch(label, {})).toBeUndefined();
    expect(mismatch(label, { state: 'open' })).toBeUndefined();
    expect(mismatch(label, { state: 'all' })).toMatch(/none of/);
  });

  it('compares date-times as instants, whatever the offset', () => {
    expect(mismatch('2026-03-09T10:00:00+01:00', '2026-03-09T09:00:00Z')).toBeUndefined();
    expect(mismatch('2026-03-09T10:00:00+01:00', '2026-03-09T10:00:00Z')).toMatch(/instant/);
    expect(mismatch('2026-03-01', '2026-03-01T00:00:00Z')).toMatch(/expected "2026-03-01"/);
  });

  it('compares arrays as multisets of the same length and objects as subsets', () => {
    expect(mismatch(['bob@acme.com', 'alice@acme.com'], ['alice@acme.com', 'bob@acme.com'])).toBeUndefined();
    expect(mismatch(['bug'], ['bug', 'urgent'])).toBeDefined();
    expect(mismatch(['a', 'a'], ['a', 'b'])).toBeDefined();
    expect(mismatch({ owner: 'acme', issue_number: 12 }, { owner: 'acme', repo: 'webapp', issue_number: 12 })).toBeUndefined();
    expect(mismatch({ issue_number: 12 }, { issue_number: '12' })).toBeDefined();
  });
});

describe('planMismatch', () => {
  it('wants the same sequence of actions', () => {
    const expected = [{ action: 'github.list_issues' }, { action: 'slack.post_message' }];
    expect(planMismatch(expected, [step('github.list_issues'), step('slack.post_message')])).toBeUndefined();
    expect(planMismatch(expected, [step('slack.post_message'), step('github.list_issues')])).toMatch(/steps: expected/);
    expect(planMismatch(expected, [step('github.list_issues')])).toMatch(/steps: expected/);
  });
});

describe('unaskedSideEffects', () => {
  it('flags a send in place of a draft, a repeated write and an extra write, not an extra read', () => {
    const draft = [{ action: 'gmail.create_draft' }];
    expect(unaskedSideEffects(draft, [step('gmail.send_email')], sideEffectOf)).toEqual(['gmail.send_email']);
    const post = [{ action: 'slack.post_message' }];
    expect(unaskedSideEffects(post, [step('slack.post_message'), step('slack.post_message')], sideEffectOf)).toEqual([
      'slack.post_message',
    ]);
    expect(unaskedSideEffects(post, [step('slack.post_message'), step('github.merge_pull_request')], sideEffectOf)).toEqual([
      'github.merge_pull_request',
    ]);
    expect(unaskedSideEffects(post, [step('gmail.search_email'), step('slack.post_message')], sideEffectOf)).toEqual([]);
  });

  it('counts an action the catalog does not know as a write', () => {
    expect(unaskedSideEffects([], [step('github.delete_repository')], sideEffectOf)).toEqual(['github.delete_repository']);
  });
});

describe('score', () => {
  const send = { steps: [{ action: 'gmail.send_email', input: { to: ['bob@acme.com'], body: { $contains: 'late' } } }] };

  it('tells a right plan from a wrong one', () => {
    expect(
      score(entry(send), { ok: true, steps: [step('gmail.send_email', { to: ['bob@acme.com'], body: 'Running late' })] }, sideEffectOf)
        .verdict,
    ).toBe('planned_right');
    const wrong = score(
      entry(send),
      { ok: true, steps: [step('gmail.send_email', { to: ['bob@acme.com'], body: 'a message' })] },
      sideEffectOf,
    );
    expect(wrong.verdict).toBe('wrong_plan');
    expect(wrong.unasked).toEqual([]);
  });

  it('counts refusing a supported request apart from a wrong plan, and a refusal without a suggestion', () => {
    const s = score(entry(send), { ok: false, code: 'no_matching_tool', message: 'm', suggestion: ' ' }, sideEffectOf);
    expect(s).toMatchObject({ verdict: 'refused_wrongly', no_suggestion: true });
  });

  it('flags every write of a plan made for a request that must be refused', () => {
    const s = score(entry({ refuse: true }), { ok: true, steps: [step('gmail.search_email'), step('gmail.send_email')] }, sideEffectOf);
    expect(s).toMatchObject({ verdict: 'wrong_plan', unasked: ['gmail.send_email'] });
    expect(
      score(entry({ refuse: true }), { ok: false, code: 'unsupported_request', message: 'm', suggestion: 's' }, sideEffectOf),
    ).toMatchObject({
      verdict: 'refused_right',
      no_suggestion: false,
    });
  });

  it('accepts any of the alternatives and flags only a write none of them allows', () => {
    const e = entry({
      any_of: [
        { steps: [{ action: 'github.list_issues' }, { action: 'slack.post_message' }] },
        { steps: [{ action: 'gmail.search_email' }] },
      ],
    });
    expect(score(e, { ok: true, steps: [step('gmail.search_email')] }, sideEffectOf).verdict).toBe('planned_right');
    const s = score(e, { ok: true, steps: [step('gmail.search_email'), step('slack.post_message')] }, sideEffectOf);
    expect(s).toMatchObject({ verdict: 'wrong_plan', unasked: [] });
  });
});

describe('the corpus', () => {
  const corpus = loadCorpus(join(__dirname, 'corpus'));
  // The built-in catalog's actions (packages/catalog): a label naming anything else is a typo.
  const CATALOG = new Set(BUILT_IN_TOOLS.flatMap((t) => t.actions.map((a) => `${t.name}.${a.name}`)));

  it('has at least 320 requests, 20 per category, 10 % in other languages and 10 % to refuse', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(320);
    for (const c of CATEGORIES) expect([c, corpus.filter((e) => e.category === c).length >= 20]).toEqual([c, true]);
    expect(corpus.filter((e) => e.lang !== 'en').length / corpus.length).toBeGreaterThanOrEqual(0.1);
    expect(corpus.filter((e) => 'refuse' in e.expect).length / corpus.length).toBeGreaterThanOrEqual(0.1);
  });

  it('labels only actions of the catalog', () => {
    const unknown = corpus.flatMap((e) => expectedSteps(e.expect).map((s) => s.action)).filter((a) => !CATALOG.has(a));
    expect(unknown).toEqual([]);
  });
});

describe('the scripted model', () => {
  it('misbehaves on a stable share of requests, sending where a draft was asked', () => {
    const faults = loadCorpus(join(__dirname, 'corpus')).map((e) => ({ e, s: scriptFor(e) }));
    const faulty = faults.filter((f) => f.s.fault);
    expect(faulty.length).toBeGreaterThan(faults.length * 0.1);
    expect(faulty.length).toBeLessThan(faults.length * 0.3);
    const draft = faulty.find((f) => f.s.fault === 'send_instead_of_draft');
    expect(draft?.s.calls.map((c) => c.name)).toContain('gmail__send_email');
    expect(new Set(faulty.map((f) => f.s.fault))).toEqual(
      new Set(['send_instead_of_draft', 'duplicated_write', 'extra_unrelated_write', 'write_for_refusal']),
    );
  });
});
