import { Ajv, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { STORABLE_KEYWORD, storableProblem, type StorableLimits } from './api/storable.js';
import { ENVELOPE_VERSION, envelopeReadSchema, envelopeSchema, type Envelope } from './messages/envelope.js';
import { CATALOG, type MessageType, type ReplyOf, type RequestType } from './messages/catalog.js';
import type { MessageDefinition } from './messages/topology.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** One ajv instance; every schema compiled once, at first use. */
export const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: true });
addFormats(ajv);

const queryAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: true, useDefaults: true });
addFormats(queryAjv);

/** For what a consumer reads: the tolerant copies of message schemas (their own instance: they are not the strict ones). */
const readAjv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: true });
addFormats(readAjv);

/** `x-storable` (api/storable.ts): the error points at the part inside the value that cannot be stored. */
const storable: SchemaValidateFunction = (limits: StorableLimits, data: unknown, _parent, cxt) => {
  const problem = storableProblem(data, limits);
  if (!problem) return true;
  storable.errors = [
    { keyword: STORABLE_KEYWORD, instancePath: `${cxt?.instancePath ?? ''}${problem.pointer}`, message: problem.message, params: {} },
  ];
  return false;
};
for (const a of [ajv, queryAjv, readAjv])
  a.addKeyword({ keyword: STORABLE_KEYWORD, schemaType: 'object', errors: true, validate: storable });

const cache = new WeakMap<object, ValidateFunction>();
const queryCache = new WeakMap<object, ValidateFunction>();
const readCache = new WeakMap<object, ValidateFunction>();

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
 * For reading a message or a reply: the schema with every `additionalProperties: false` dropped,
 * so a field added by a newer producer is ignored instead of refused. Producers and the HTTP API
 * keep the strict schema (`compile`).
 */
function compileTolerant<T = unknown>(schema: object): ValidateFunction<T> {
  let fn = readCache.get(schema);
  if (!fn) {
    fn = readAjv.compile(tolerantCopy(schema) as object);
    readCache.set(schema, fn);
  }
  return fn as ValidateFunction<T>;
}

/** A deep copy without `additionalProperties: false` and without `$id` (the copy is not the named schema). */
function tolerantCopy(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(tolerantCopy);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (key === '$id' && typeof value === 'string') continue;
    out[key] = tolerantCopy(value);
  }
  return out;
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

/** What a producer sends, checked strictly: this envelope version, the catalog's data schema, no unknown field. */
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

/** A message as a consumer reads it: one of its version's catalog, or one it cannot read (yet). */
export type ReadMessage =
  { known: true; type: MessageType; data: unknown; envelope: Envelope } | { known: false; reason: string; envelope: Envelope };

/**
 * Reads a message as a consumer: envelope and data are checked, but fields this version does not
 * know are ignored (a newer producer may add some) and `v` may be missing (version 1). A type
 * missing from `catalog`, or a newer envelope version, is `known: false`: written by a newer
 * version, for a consumer that can read it. Throws MessageValidationError for a malformed message.
 * `catalog` is this version's (a test stands in an older release's).
 */
export function readMessage(raw: unknown, catalog: Readonly<Record<string, MessageDefinition>> = CATALOG): ReadMessage {
  const env = compileTolerant(envelopeReadSchema);
  if (!env(raw)) throw new MessageValidationError(`bad envelope: ${describeErrors(env.errors, 'message')}`);
  const envelope = raw as Envelope;
  const version = envelope.v ?? 1;
  if (version > ENVELOPE_VERSION) {
    return { known: false, reason: `envelope version ${version} is newer than ${ENVELOPE_VERSION}`, envelope };
  }
  const definition = Object.hasOwn(catalog, envelope.type) ? catalog[envelope.type] : undefined;
  if (!definition) return { known: false, reason: `unknown message type ${envelope.type}`, envelope };
  const check = compileTolerant(definition.schema);
  if (!check(envelope.data)) throw new MessageValidationError(`bad ${envelope.type}: ${describeErrors(check.errors, 'data')}`);
  // Known to this version's catalog: CATALOG's types are the only ones a real process has.
  return { known: true, type: envelope.type as MessageType, data: envelope.data, envelope };
}

/** Thrown for a reply that does not match its request's reply schema: never handed on untyped. */
export class ReplyValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplyValidationError';
  }
}

/**
 * Checks a reply against its request's reply schema (compiled once) and returns it typed. Read
 * tolerantly, like a message: a field added by a newer responder is ignored.
 */
export function validateReply<T extends RequestType>(type: T, body: unknown): ReplyOf<T> {
  const check = compileTolerant<ReplyOf<T>>(CATALOG[type].reply);
  if (!check(body)) throw new ReplyValidationError(`bad reply to ${type}: ${describeErrors(check.errors, 'reply')}`);
  return body;
}
