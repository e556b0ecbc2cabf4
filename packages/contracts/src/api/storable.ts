/**
 * What the database (FerretDB, a MongoDB wire server) can store of JSON a client gives us. It
 * refuses a NUL character (U+0000) in any string or key, a key that starts with `$` or holds
 * `.`, and very deep nesting; such input used to fail only at the insert, after the request was
 * accepted. The `x-storable` keyword of a request schema (registered with ajv in
 * validation.ts, shown as is in the OpenAPI document) checks a value and everything inside it,
 * so the gateway answers 400 invalid_request naming the field before anything is sent.
 * Other control characters are stored as given.
 */
export const STORABLE_KEYWORD = 'x-storable';

/** Objects and arrays inside one another, the outermost (e.g. `metadata` itself) counted as 1. */
export const STORABLE_MAX_DEPTH = 32;
/** Longest string (value or key) inside metadata, in UTF-16 code units. */
export const METADATA_MAX_STRING = 4_096;
/** Longest string inside a custom tool's manifest (descriptions and patterns of input schemas). */
export const MANIFEST_MAX_STRING = 4_096;

/** Spread into a string's schema: a string the database can store (no NUL character). */
export const storableString = { 'x-storable': {} } as const;

export interface StorableLimits {
  /** Deepest nesting of objects and arrays allowed; absent: no limit (scalars). */
  max_depth?: number;
  /** Longest string allowed; absent: no limit here (the schema's own maxLength applies). */
  max_string_length?: number;
}

export interface StorableProblem {
  /** JSON Pointer below the checked value ('' for the value itself). */
  pointer: string;
  message: string;
}

/** The first part of `value` the database cannot store, or undefined when all of it can be stored. */
export function storableProblem(value: unknown, limits: StorableLimits, pointer = '', depth = 0): StorableProblem | undefined {
  if (typeof value === 'string') return stringProblem(value, limits, pointer, 'the value');
  if (value === null || typeof value !== 'object') return undefined;
  const max = limits.max_depth ?? Infinity;
  // Stops at the first level too deep: 10,000 levels cost no more than 33.
  if (depth + 1 > max) return { pointer, message: `nesting deeper than ${max}` };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = storableProblem(value[i], limits, `${pointer}/${i}`, depth + 1);
      if (p) return p;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    // A bad key is named in the message, at its object's path: "a.b" in a path would read as two keys.
    const named = `the key ${JSON.stringify(key)}`;
    if (key.startsWith('$')) return { pointer, message: `${named} must not start with "$"` };
    if (key.includes('.')) return { pointer, message: `${named} must not contain "."` };
    const k = stringProblem(key, limits, pointer, named);
    if (k) return k;
    const p = storableProblem(item, limits, `${pointer}/${escapePointer(key)}`, depth + 1);
    if (p) return p;
  }
  return undefined;
}

function stringProblem(s: string, limits: StorableLimits, pointer: string, what: string): StorableProblem | undefined {
  if (s.includes('\u0000')) return { pointer, message: `${what} contains a NUL character (U+0000), which cannot be stored` };
  const max = limits.max_string_length;
  if (max !== undefined && s.length > max) return { pointer, message: `${what} is longer than ${max} characters` };
  return undefined;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
