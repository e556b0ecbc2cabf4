import type { FromSchema } from 'json-schema-to-ts';
import { ENVIRONMENTS } from '../api/task.schema.js';

/** Field schemas every owner's messages share. */
export const id = { type: 'string', minLength: 1, maxLength: 256 } as const;
export const env = { type: 'string', enum: ENVIRONMENTS } as const;
export const ts = { type: 'string', format: 'date-time' } as const;
export const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] } as const;

/** The `{ok: false, error: {code, message}}` a request/reply owner answers when it cannot do what was asked. */
export const refusalSchema = {
  type: 'object',
  properties: {
    ok: { const: false },
    error: {
      type: 'object',
      properties: { code: { type: 'string' }, message: { type: 'string' } },
      required: ['code', 'message'],
      additionalProperties: false,
    },
  },
  required: ['ok', 'error'],
  additionalProperties: false,
} as const;
export type RefusalReply = FromSchema<typeof refusalSchema>;

/** `{ok: true}` or a refusal: the answer of a command that returns nothing else. */
export const doneReplySchema = {
  anyOf: [{ type: 'object', properties: { ok: { const: true } }, required: ['ok'], additionalProperties: false }, refusalSchema],
} as const;
export type DoneReply = FromSchema<typeof doneReplySchema>;

/** A success answer: `ok: true` beside `properties`, nothing else. */
export function accepted<const P extends object, const R extends readonly string[]>(properties: P, required: R) {
  return {
    type: 'object',
    properties: { ok: { const: true }, ...properties },
    required: ['ok', ...required],
    additionalProperties: false,
  } as const;
}

/** A request's reply: its success answer, or a refusal. */
export function acceptedOrRefused<const P extends object, const R extends readonly string[]>(properties: P, required: R) {
  return { anyOf: [accepted(properties, required), refusalSchema] } as const;
}
