import { compile, describeErrors } from '../validation.js';
import { createTaskBodySchema, listTasksQuerySchema } from './task.schema.js';
import { toolManifestSchema } from './tool.schema.js';
import { STORABLE_MAX_DEPTH, storableProblem } from './storable.js';

/** `{a: {a: … {x: 1}}}` with `levels` objects around `{x: 1}`. */
function nested(levels: number): Record<string, unknown> {
  let v: Record<string, unknown> = { x: 1 };
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

/** The 400 message the gateway would answer for this create body, or 'valid'. */
function createMessage(body: object): string {
  const check = compile(createTaskBodySchema);
  return check(body) ? 'valid' : describeErrors(check.errors);
}

describe('x-storable: what the database can store', () => {
  it('refuses a NUL character in the prompt and in user_id, naming the field', () => {
    expect(createMessage({ prompt: 'send\u0000 mail' })).toBe(
      'prompt: the value contains a NUL character (U+0000), which cannot be stored',
    );
    expect(createMessage({ prompt: 'x', user_id: 'u\u0000' })).toMatch(/^user_id: the value contains a NUL character/);
  });

  it('keeps other control characters: the database stores them', () => {
    expect(createMessage({ prompt: 'line\u0001\ttab\u001f', metadata: { a: '\u007f' } })).toBe('valid');
  });

  it('refuses metadata keys that start with $ or hold a dot, at any depth', () => {
    expect(createMessage({ prompt: 'x', metadata: { a: { $gt: 1 } } })).toBe('metadata.a: the key "$gt" must not start with "$"');
    expect(createMessage({ prompt: 'x', metadata: { 'a.b': 1 } })).toBe('metadata: the key "a.b" must not contain "."');
    expect(createMessage({ prompt: 'x', metadata: { list: [{ 'k\u0000': 1 }] } })).toBe(
      'metadata.list.0: the key "k\\u0000" contains a NUL character (U+0000), which cannot be stored',
    );
    expect(createMessage({ prompt: 'x', metadata: { a$: 1, b: { c$d: [] } } })).toBe('valid');
  });

  it(`accepts metadata nested ${STORABLE_MAX_DEPTH} deep and refuses one level more`, () => {
    // metadata itself is level 1; nested(n) adds n levels above {x: 1}.
    expect(createMessage({ prompt: 'x', metadata: nested(STORABLE_MAX_DEPTH - 1) })).toBe('valid');
    const message = createMessage({ prompt: 'x', metadata: nested(STORABLE_MAX_DEPTH) });
    expect(message).toBe(`metadata${'.a'.repeat(STORABLE_MAX_DEPTH)}: nesting deeper than ${STORABLE_MAX_DEPTH}`);
  });

  it('refuses 10,000 levels quickly, without going deeper than the limit', () => {
    const started = performance.now();
    expect(createMessage({ prompt: 'x', metadata: nested(10_000) })).toMatch(/: nesting deeper than 32$/);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('refuses metadata strings and keys over the documented size', () => {
    expect(createMessage({ prompt: 'x', metadata: { a: ['y'.repeat(4096)] } })).toBe('valid');
    expect(createMessage({ prompt: 'x', metadata: { a: ['y'.repeat(4097)] } })).toBe(
      'metadata.a.0: the value is longer than 4096 characters',
    );
  });

  it('holds list filters and custom tool manifests to the same rules', () => {
    const query = compile(listTasksQuerySchema);
    expect(query({ user_id: 'a\u0000' })).toBe(false);
    const manifest = compile(toolManifestSchema);
    const tool = {
      name: 'crm_tool',
      description: 'A CRM',
      base_url: 'https://crm.example.com',
      actions: [{ name: 'find', description: 'Find', method: 'GET', path: '/find', input_schema: { type: 'object', $defs: {} } }],
    };
    expect(manifest(tool)).toBe(false);
    expect(describeErrors(manifest.errors, 'manifest')).toBe('actions.0.input_schema: the key "$defs" must not start with "$"');
    const { $defs: _defs, ...schema } = tool.actions[0]!.input_schema;
    expect(manifest({ ...tool, actions: [{ ...tool.actions[0], input_schema: schema }] })).toBe(true);
  });

  it('names a key holding "/" or "~" as it is written', () => {
    expect(storableProblem({ 'a/b': { '~c': '\u0000' } }, {})).toEqual({
      pointer: '/a~1b/~0c',
      message: 'the value contains a NUL character (U+0000), which cannot be stored',
    });
    expect(createMessage({ prompt: 'x', metadata: { 'a/b': { '~c': '\u0000' } } })).toMatch(/^metadata\.a\/b\.~c: /);
  });
});
