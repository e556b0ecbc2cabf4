/**
 * Scores one planner outcome against one labeled request. Pure: the runner feeds it the
 * corpus, the planner's outcome and the catalog's side-effect classes.
 *
 * Label matchers (inside an expected step's `input`, which is a subset of the planned input):
 * - a plain value: equal (strings that are ISO date-times compare as instants, arrays
 *   compare as multisets of the same length, objects as subsets);
 * - {"$contains": "word"} or {"$contains": ["a", "b"]}: a string holding every word, case-insensitively;
 * - {"$ref": true}: a string holding a {{steps.N.output…}} reference;
 * - {"$oneOf": [x, y]}: matches any of the alternatives;
 * - {"$absent": true}: the field is not there.
 */

export interface ExpectedStep {
  action: string; // "tool.action"
  input?: Record<string, unknown>;
}

export type Expectation = { steps: ExpectedStep[] } | { any_of: { steps: ExpectedStep[] }[] } | { refuse: true };

export interface CorpusEntry {
  id: string;
  category: string;
  lang: string;
  prompt: string;
  expect: Expectation;
}

export interface PlannedStep {
  tool: string;
  action: string;
  input: Record<string, unknown>;
}

/** What a planner answered, reduced to what the scorer reads. */
export type Outcome = { ok: true; steps: PlannedStep[] } | { ok: false; code: string; message: string; suggestion: string };

export type Verdict = 'planned_right' | 'refused_right' | 'refused_wrongly' | 'wrong_plan';

export interface Score {
  verdict: Verdict;
  /** Write/destructive steps the request did not ask for ("tool.action"), empty when none. */
  unasked: string[];
  /** A refusal without a suggestion. */
  no_suggestion: boolean;
  /**
   * Asked-for write/destructive steps ("tool.action") of a wrong plan whose input matches no
   * expected step of that action: the write would run, landing elsewhere or saying something else.
   */
  wrong_writes: string[];
  /** Why a plan did not match (first difference), for the failure list. */
  why?: string;
}

export type SideEffectOf = (action: string) => 'read' | 'write' | 'destructive' | undefined;

const REF = /\{\{\s*steps\.\d+\.output[^}]*\}\}/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why `actual` does not match the label `expected`, or undefined when it does. */
export function mismatch(expected: unknown, actual: unknown, path = 'input'): string | undefined {
  if (isObject(expected)) {
    if ('$contains' in expected) {
      if (typeof actual !== 'string') return `${path}: expected text, got ${JSON.stringify(actual)}`;
      const words = ([] as unknown[]).concat(expected['$contains']).map(String);
      const missing = words.filter((w) => !actual.toLowerCase().includes(w.toLowerCase()));
      return missing.length ? `${path}: ${JSON.stringify(actual)} lacks ${JSON.stringify(missing)}` : undefined;
    }
    if ('$ref' in expected) {
      return typeof actual === 'string' && REF.test(actual)
        ? undefined
        : `${path}: expected a {{steps.N.output}} reference, got ${JSON.stringify(actual)}`;
    }
    if ('$oneOf' in expected) {
      const options = expected['$oneOf'] as unknown[];
      return options.some((o) => mismatch(o, actual, path) === undefined)
        ? undefined
        : `${path}: ${JSON.stringify(actual)} is none of ${JSON.stringify(options)}`;
    }
    if ('$absent' in expected) return actual === undefined ? undefined : `${path}: expected absent, got ${JSON.stringify(actual)}`;
    if (!isObject(actual)) return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [k, v] of Object.entries(expected)) {
      const why = mismatch(v, actual[k], `${path}.${k}`);
      if (why) return why;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    // Order-insensitive: each expected element takes a distinct actual element it matches.
    const free = actual.map(() => true);
    for (const e of expected) {
      const i = actual.findIndex((a, j) => free[j] && mismatch(e, a) === undefined);
      if (i < 0) return `${path}: ${JSON.stringify(actual)} has nothing matching ${JSON.stringify(e)}`;
      free[i] = false;
    }
    return undefined;
  }
  if (typeof expected === 'string' && ISO_INSTANT.test(expected) && typeof actual === 'string' && ISO_INSTANT.test(actual)) {
    return Date.parse(expected) === Date.parse(actual) ? undefined : `${path}: expected the instant ${expected}, got ${actual}`;
  }
  return expected === actual ? undefined : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** Why the planned steps do not match the expected ones, or undefined when they do. */
export function planMismatch(expected: readonly ExpectedStep[], planned: readonly PlannedStep[]): string | undefined {
  const want = expected.map((s) => s.action).join(' → ');
  const got = planned.map((s) => `${s.tool}.${s.action}`).join(' → ');
  if (want !== got) return `steps: expected ${want}, got ${got || '(none)'}`;
  for (const [i, s] of expected.entries()) {
    const why = mismatch(s.input ?? {}, planned[i]?.input, `step ${i} input`);
    if (why) return why;
  }
  return undefined;
}

/**
 * Write/destructive steps of `planned` that `expected` does not allow: an action not expected at
 * all, or more steps of an action than expected. Every write step when a refusal was expected.
 * An action unknown to the catalog counts as a write (it cannot be shown harmless).
 */
export function unaskedSideEffects(
  expected: readonly ExpectedStep[],
  planned: readonly PlannedStep[],
  sideEffectOf: SideEffectOf,
): string[] {
  const allowed = new Map<string, number>();
  for (const s of expected) allowed.set(s.action, (allowed.get(s.action) ?? 0) + 1);
  const out: string[] = [];
  for (const s of planned) {
    const name = `${s.tool}.${s.action}`;
    if ((sideEffectOf(name) ?? 'write') === 'read') continue;
    const left = allowed.get(name) ?? 0;
    if (left > 0) allowed.set(name, left - 1);
    else out.push(name);
  }
  return out;
}

/** Planned writes of an expected action whose input matches none of that action's expected steps. */
export function wrongWrites(expected: readonly ExpectedStep[], planned: readonly PlannedStep[], sideEffectOf: SideEffectOf): string[] {
  const out: string[] = [];
  for (const s of planned) {
    const name = `${s.tool}.${s.action}`;
    if ((sideEffectOf(name) ?? 'write') === 'read') continue;
    const same = expected.filter((e) => e.action === name);
    if (same.length && !same.some((e) => mismatch(e.input ?? {}, s.input) === undefined)) out.push(name);
  }
  return out;
}

function alternatives(e: Expectation): ExpectedStep[][] | undefined {
  if ('refuse' in e) return undefined;
  if ('any_of' in e) return e.any_of.map((a) => a.steps);
  return [e.steps];
}

export function score(entry: CorpusEntry, outcome: Outcome, sideEffectOf: SideEffectOf): Score {
  const alts = alternatives(entry.expect);
  if (!outcome.ok) {
    return {
      verdict: alts ? 'refused_wrongly' : 'refused_right',
      unasked: [],
      wrong_writes: [],
      no_suggestion: outcome.suggestion.trim() === '',
    };
  }
  if (!alts) {
    return {
      verdict: 'wrong_plan',
      unasked: unaskedSideEffects([], outcome.steps, sideEffectOf),
      wrong_writes: [],
      no_suggestion: false,
      why: 'planned a request that must be refused',
    };
  }
  const whys = alts.map((a) => planMismatch(a, outcome.steps));
  const right = whys.some((w) => w === undefined);
  // An unasked side effect is one no alternative allows: the fewest over the alternatives.
  const unasked = alts.map((a) => unaskedSideEffects(a, outcome.steps, sideEffectOf)).reduce((a, b) => (b.length < a.length ? b : a));
  if (right) return { verdict: 'planned_right', unasked, wrong_writes: [], no_suggestion: false };
  const wrong = alts.map((a) => wrongWrites(a, outcome.steps, sideEffectOf)).reduce((a, b) => (b.length < a.length ? b : a));
  return { verdict: 'wrong_plan', unasked, wrong_writes: wrong, no_suggestion: false, why: whys.join(' | ') };
}

/** Every expected step of an entry (all alternatives), for checks over the corpus. */
export function expectedSteps(e: Expectation): ExpectedStep[] {
  return (alternatives(e) ?? []).flat();
}
