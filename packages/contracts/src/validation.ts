import { Ajv, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { STORABLE_KEYWORD, storableProblem, type StorableLimits } from './api/storable.js';
import { envelopeSchema } from './messages/envelope.js';
import { CATALOG, type MessageType, type ReplyOf, type RequestType } from './messages/catalog.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** One ajv instance; every schema compiled once, at first use. */
export const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: true });
addFormats(ajv);

const queryAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: true, useDefaults: true });
addFormats(queryAjv);

/** `x-storable` (api/storable.ts): the error points at the part inside the value that cannot be stored. */
const storable: SchemaValidateFunction = (limits: StorableLimits, data: unknown, _parent, cxt) => {
  const problem = storableProblem(data, limits);
  if (!problem) return true;
  storable.errors = [
    { keyword: STORABLE_KEYWORD, instancePath: `${cxt?.instancePath ?? ''}${problem.pointer}`, message: problem.message, params: {} },
  ];
  return false;
};
for (const a of [ajv, queryAjv]) a.addKeyword({ keyword: STORABLE_KEYWORD, schemaType: 'object', errors: true, validate: storable });

const cache = new WeakMap<object, ValidateFunction>();
const queryCache = new WeakMap<object, ValidateFunction>();

export function compile<T = unknown>(schema: object): ValidateFunction<T> {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn as ValidateFunction<T>;
}

/** For query strings: coerces "20" to 20 and applies defaults. */
export function compileQuery<T = unknown>(schema: object): ValidateFunction<T> {
  let fn = queryCache.get(schema);
  if (!fn) {
    fn = queryAjv.compile(schema);
    queryCache.set(schema, fn);
  }
  return fn as ValidateFunction<T>;
}

/**
 * Schemas that arrive as data (custom tools' input schemas) get their own ajv: each new
 * object would otherwise stay in the shared one forever. Compiled validators are kept in a
 * bounded cache keyed by the schema's JSON, and removed from this ajv when evicted.
 * Throws when the schema itself is invalid.
 */
const dynamicAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: true });
addFormats(dynamicAjv);
const dynamicCache = new Map<string, { schema: object; fn: ValidateFunction }>();
const DYNAMIC_CACHE_SIZE = 500;

export function compileDynamic(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let hit = dynamicCache.get(key);
  if (!hit) {
    hit = { schema, fn: dynamicAjv.compile(schema) };
    dynamicCache.set(key, hit);
    if (dynamicCache.size > DYNAMIC_CACHE_SIZE) {
      const [oldKey, old] = dynamicCache.entries().next().value as [string, { schema: object }];
      dynamicCache.delete(oldKey);
      dynamicAjv.removeSchema(old.schema);
    }
  }
  return hit.fn;
}

/** "prompt must be string": names the field, readable by a person. */
export function describeErrors(errors: ErrorObject[] | null | undefined, root = 'body'): string {
  const e = errors?.[0];
  if (!e) return `${root} is invalid`;
  const path = e.instancePath.replace(/^\//, '').replaceAll('/', '.').replaceAll('~1', '/').replaceAll('~0', '~');
  switch (e.keyword) {
    case STORABLE_KEYWORD:
      return `${path || root}: ${e.message ?? 'cannot be stored'}`;
    case 'required':
      return `${path ? `${path}.` : ''}${String(e.params['missingProperty'])} is required`;
    case 'additionalProperties':
      return `${path ? `${path}.` : ''}${String(e.params['additionalProperty'])} is not an allowed field`;
    case 'enum':
      return `${path || root} must be one of: ${(e.params['allowedValues'] as unknown[]).join(', ')}`;
    default:
      return `${path || root} ${e.message ?? 'is invalid'}`;
  }
}

export class MessageValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MessageValidationError';
  }
}

/** Checks the envelope and the data of a message against the catalog. */
export function validateMessage(raw: unknown): { type: MessageType; data: unknown } {
  const env = compile(envelopeSchema);
  if (!env(raw)) throw new MessageValidationError(`bad envelope: ${describeErrors(env.errors, 'message')}`);
  const msg = raw as { type: string; data: unknown };
  if (!Object.hasOwn(CATALOG, msg.type)) throw new MessageValidationError(`unknown message type ${msg.type}`);
  const type = msg.type as MessageType;
  const check = compile(CATALOG[type].schema);
  if (!check(msg.data)) throw new MessageValidationError(`bad ${type}: ${describeErrors(check.errors, 'data')}`);
  return { type, data: msg.data };
}

/** Thrown for a reply that does not match its request's reply schema: never handed on untyped. */
export class ReplyValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplyValidationError';
  }
}

/** Checks a reply against its request's reply schema (compiled once) and returns it typed. */
export function validateReply<T extends RequestType>(type: T, body: unknown): ReplyOf<T> {
  const check = compile<ReplyOf<T>>(CATALOG[type].reply);
  if (!check(body)) throw new ReplyValidationError(`bad reply to ${type}: ${describeErrors(check.errors, 'reply')}`);
  return body;
}
