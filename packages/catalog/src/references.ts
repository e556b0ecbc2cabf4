/**
 * Step references: a step's input may use earlier steps' outputs through string
 * placeholders of the form
 *
 *     {{steps.<index>.output<.field|.index>*}}      e.g. {{steps.0.output.items.2.number}}
 *
 * <index> is the 0-based index of an EARLIER step of the same task; the path walks
 * object fields and array indexes of that step's output. A string that is exactly one
 * placeholder becomes the referenced value itself (array, object, number…); a
 * placeholder inside a longer string is rendered as text (see `render`). The executor
 * resolves them just before running the step, from its own record of the task's
 * finished steps.
 */
export const REFERENCE_PATTERN = /\{\{\s*steps\.(\d+)\.output((?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*steps\.(\d+)\.output((?:\.[A-Za-z0-9_-]+)*)\s*\}\}$/;

export function ref(step: number, path = ''): string {
  return `{{steps.${step}.output${path ? `.${path}` : ''}}}`;
}

export interface Reference {
  step: number;
  path: string[];
}

/** Every reference anywhere in a value (strings inside objects and arrays included). */
export function findReferences(value: unknown): Reference[] {
  const out: Reference[] = [];
  walkStrings(value, (s) => {
    for (const m of s.matchAll(REFERENCE_PATTERN)) out.push({ step: Number(m[1]), path: splitPath(m[2] ?? '') });
  });
  return out;
}

export function hasReference(value: unknown): boolean {
  return findReferences(value).length > 0;
}

function walkStrings(value: unknown, fn: (s: string) => void): void {
  if (typeof value === 'string') fn(value);
  else if (Array.isArray(value)) value.forEach((v) => walkStrings(v, fn));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => walkStrings(v, fn));
}

function splitPath(p: string): string[] {
  return p.split('.').filter(Boolean);
}

/** Why a reference did not resolve: `skip` when the data is simply not there (fewer items than planned, an upstream skip). */
export class StepReferenceError extends Error {
  constructor(
    message: string,
    readonly skip: boolean,
  ) {
    super(message);
    this.name = 'StepReferenceError';
  }
}

/** Outputs of the task's earlier steps by index; undefined when that step has no recorded output. */
export type OutputLookup = (step: number) => Record<string, unknown> | undefined;

/** Replaces every placeholder of `value`; throws StepReferenceError when one cannot be resolved. */
export function resolveReferences<T>(value: T, outputs: OutputLookup, currentStep: number): T {
  return resolveValue(value, outputs, currentStep) as T;
}

function resolveValue(value: unknown, outputs: OutputLookup, current: number): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value);
    if (whole) return lookup(Number(whole[1]), splitPath(whole[2] ?? ''), outputs, current);
    if (!value.includes('{{')) return value;
    return value.replace(REFERENCE_PATTERN, (_m, step: string, path: string) =>
      render(lookup(Number(step), splitPath(path), outputs, current)),
    );
  }
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, outputs, current));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveValue(v, outputs, current)]));
  }
  return value;
}

function lookup(step: number, path: string[], outputs: OutputLookup, current: number): unknown {
  const shown = `steps.${step}.output${path.length ? `.${path.join('.')}` : ''}`;
  if (step >= current) throw new StepReferenceError(`${shown} refers to step ${step}, which does not run before step ${current}`, false);
  const out = outputs(step);
  if (!out) throw new StepReferenceError(`${shown}: step ${step} has no recorded output`, false);
  if (out['skipped'] === true) throw new StepReferenceError(`${shown}: step ${step} was skipped`, true);
  let v: unknown = out;
  for (const [i, key] of path.entries()) {
    if (Array.isArray(v)) {
      const idx = Number(key);
      if (!Number.isInteger(idx)) throw new StepReferenceError(`${shown}: "${key}" is not an index of a list`, false);
      if (idx >= v.length) throw new StepReferenceError(`${shown}: the list has ${v.length} item(s)`, true);
      v = v[idx];
    } else if (v && typeof v === 'object' && key in v) {
      v = (v as Record<string, unknown>)[key];
    } else {
      throw new StepReferenceError(`${shown}: no "${path.slice(0, i + 1).join('.')}" in the output of step ${step}`, false);
    }
  }
  return v;
}

/**
 * Text form of a value inside a longer string: scalars as they are; an object by its
 * `#number title (url)` or name/summary/subject/text, else JSON; a list one item per line.
 */
export function render(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? '(none)' : value.map((v) => `• ${render(v)}`).join('\n');
  const o = value as Record<string, unknown>;
  const label = ['title', 'name', 'summary', 'subject', 'text', 'full_name'].map((k) => o[k]).find((v) => typeof v === 'string');
  if (typeof label === 'string') {
    const num = typeof o['number'] === 'number' ? `#${o['number']} ` : '';
    const when = typeof o['start'] === 'string' ? ` at ${o['start']}` : '';
    const from = typeof o['from'] === 'string' && typeof o['subject'] === 'string' ? ` from ${o['from']}` : '';
    const url = typeof o['url'] === 'string' ? ` (${o['url']})` : '';
    return `${num}${label}${when}${from}${url}`;
  }
  if (typeof o['count'] === 'number' && Object.keys(o).length <= 2) return String(o['count']);
  return JSON.stringify(value);
}

interface PropSchema {
  type?: string | string[];
  items?: { type?: string; format?: string };
}

/**
 * Adapts resolved values to the action's input schema, top-level fields only: a non-text
 * value for a string field is rendered; "12" for a number field becomes 12; one value for
 * an array field becomes a one-item array; "Name <a@b.c>" for an email list becomes a@b.c.
 */
export function coerceToSchema(input: Record<string, unknown>, schema: object): Record<string, unknown> {
  const props = (schema as { properties?: Record<string, PropSchema> }).properties ?? {};
  const out: Record<string, unknown> = { ...input };
  for (const [k, v] of Object.entries(out)) {
    const p = props[k];
    if (!p || typeof p.type !== 'string') continue;
    if (p.type === 'string' && typeof v !== 'string') out[k] = render(v);
    else if ((p.type === 'integer' || p.type === 'number') && typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim())) out[k] = Number(v);
    else if (p.type === 'array' && v !== undefined && v !== null) {
      let arr: unknown[] = Array.isArray(v) ? (v as unknown[]) : [v];
      if (p.items?.format === 'email') arr = arr.map((x) => (typeof x === 'string' ? emailAddress(x) : x));
      if (p.items?.type === 'string') arr = arr.map((x) => (typeof x === 'string' ? x : render(x)));
      out[k] = arr;
    }
  }
  return out;
}

function emailAddress(s: string): string {
  const m = /<([^<>\s]+@[^<>\s]+)>/.exec(s);
  return m?.[1] ?? s.trim();
}

/**
 * For checking a planned input before its references are known: the fields that hold a
 * reference are left out of the input and out of the schema's `required`.
 */
export function withoutReferencedFields(
  schema: object,
  input: Record<string, unknown>,
): { schema: object; input: Record<string, unknown> } {
  const referenced = Object.keys(input).filter((k) => hasReference(input[k]));
  if (referenced.length === 0) return { schema, input };
  const s = schema as { required?: string[] };
  const rest = Object.fromEntries(Object.entries(input).filter(([k]) => !referenced.includes(k)));
  return { schema: { ...schema, required: (s.required ?? []).filter((r) => !referenced.includes(r)) }, input: rest };
}
