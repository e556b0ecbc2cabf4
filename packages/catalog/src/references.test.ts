import {
  BUILT_IN_TOOLS,
  coerceToSchema,
  findAction,
  findReferences,
  ref,
  StepReferenceError,
  render,
  resolveReferences,
  withoutReferencedFields,
} from './index.js';

describe('step references {{steps.N.output…}}', () => {
  const outputs: Record<number, Record<string, unknown>> = {
    0: {
      items: [
        { number: 7, title: 'Bug', url: 'https://x/7' },
        { number: 8, title: 'Docs' },
      ],
      count: 2,
    },
    1: { skipped: true, reason: 'x' },
    2: { text: 'hello', nested: { deep: [1, 2] } },
  };
  const lookup = (i: number) => outputs[i];

  it('builds and finds references', () => {
    expect(ref(0, 'items.1.number')).toBe('{{steps.0.output.items.1.number}}');
    expect(ref(3)).toBe('{{steps.3.output}}');
    expect(findReferences({ a: ['x {{steps.2.output.text}}', { b: '{{ steps.0.output }}' }] })).toEqual([
      { step: 2, path: ['text'] },
      { step: 0, path: [] },
    ]);
  });

  it('a whole-string reference becomes the value itself; an embedded one is rendered as text', () => {
    expect(resolveReferences({ n: '{{steps.0.output.items.0.number}}', all: '{{steps.0.output.items}}' }, lookup, 5)).toEqual({
      n: 7,
      all: outputs[0]!['items'],
    });
    expect(resolveReferences({ t: 'Issues:\n{{steps.0.output.items}}' }, lookup, 5)).toEqual({
      t: 'Issues:\n• #7 Bug (https://x/7)\n• #8 Docs',
    });
    expect(resolveReferences(['{{steps.2.output.nested.deep.1}}'], lookup, 5)).toEqual([2]);
  });

  it('skips when an item or an upstream step is missing, and fails on a wrong path or a later step', () => {
    const err = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e as StepReferenceError;
      }
      throw new Error('no error');
    };
    expect(err(() => resolveReferences('{{steps.0.output.items.5.number}}', lookup, 5))).toMatchObject({
      skip: true,
      message: expect.stringContaining('the list has 2 item(s)'),
    });
    expect(err(() => resolveReferences('{{steps.1.output.text}}', lookup, 5))).toMatchObject({ skip: true });
    expect(err(() => resolveReferences('{{steps.2.output.nope}}', lookup, 5))).toMatchObject({
      skip: false,
      message: expect.stringContaining('no "nope"'),
    });
    expect(err(() => resolveReferences('{{steps.4.output}}', lookup, 5))).toMatchObject({
      skip: false,
      message: expect.stringContaining('no recorded output'),
    });
    expect(err(() => resolveReferences('{{steps.5.output}}', lookup, 5))).toMatchObject({
      skip: false,
      message: expect.stringContaining('does not run before step 5'),
    });
  });

  it('renders values for text', () => {
    expect(render([])).toBe('(none)');
    expect(render({ summary: 'Standup', start: '2025-01-01T09:00:00Z' })).toBe('Standup at 2025-01-01T09:00:00Z');
    expect(render({ subject: 'Hi', from: 'a@b.c' })).toBe('Hi from a@b.c');
    expect(render({ count: 3 })).toBe('3');
    expect(render({ a: 1 })).toBe('{"a":1}');
  });

  it('adapts resolved values to the action schema', () => {
    const send = findAction('gmail', 'send_email')!.input;
    expect(coerceToSchema({ to: 'Alice <alice@example.com>', subject: { title: 'T' }, body: ['a', 'b'] }, send)).toEqual({
      to: ['alice@example.com'],
      subject: 'T',
      body: '• a\n• b',
    });
    expect(coerceToSchema({ issue_number: '12' }, findAction('github', 'add_labels')!.input)).toEqual({ issue_number: 12 });
  });

  it('sets referenced fields aside for checking a planned input', () => {
    const schema = findAction('github', 'add_labels')!.input;
    const { schema: s, input } = withoutReferencedFields(schema, {
      owner: 'a',
      repo: 'b',
      issue_number: '{{steps.0.output.number}}',
      labels: ['x'],
    });
    expect(input).toEqual({ owner: 'a', repo: 'b', labels: ['x'] });
    expect((s as { required: string[] }).required).toEqual(['owner', 'repo', 'labels']);
  });

  it('describes every action with input, output, scopes and side effect; connected tools declare scopes', () => {
    for (const tool of BUILT_IN_TOOLS) {
      expect(tool.keywords.length).toBeGreaterThan(0);
      for (const a of tool.actions) {
        expect(a).toMatchObject({
          name: expect.any(String),
          description: expect.any(String),
          input: { type: 'object' },
          output: { type: 'object' },
        });
        expect(['read', 'write', 'destructive']).toContain(a.side_effect);
        // Notion OAuth has no scopes; every other connected service names what it needs.
        if (tool.service && tool.service !== 'notion') expect(a.scopes.length).toBeGreaterThan(0);
      }
    }
    expect(BUILT_IN_TOOLS.map((t) => t.name)).toEqual(['github', 'slack', 'google_calendar', 'gmail', 'notion', 'http', 'text', 'data']);
  });
});
