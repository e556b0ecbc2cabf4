import { randomUUID } from 'node:crypto';
import type { FromSchema } from 'json-schema-to-ts';

/**
 * The envelope's version, written in `v` by every producer. A reader takes a message without `v`
 * (published before envelopes carried one) as version 1, and holds one of a newer version for a
 * consumer that can read it (docs/operations.md, "Upgrades and mixed versions").
 */
export const ENVELOPE_VERSION = 1;

const properties = {
  v: { type: 'integer', minimum: 1 },
  id: { type: 'string', minLength: 1 },
  type: { type: 'string', minLength: 1 },
  source: { type: 'string', minLength: 1 },
  occurred_at: { type: 'string', format: 'date-time' },
  partition_key: { type: 'string' },
  correlation_id: { type: 'string' },
  data: { type: 'object' },
} as const;
const required = ['id', 'type', 'source', 'occurred_at', 'data'] as const;

/** What a consumer reads: `v` may be missing, and fields it does not know are ignored. */
export const envelopeReadSchema = { type: 'object', properties, required } as const;

/** What a producer sends: this version's envelope and nothing more. */
export const envelopeSchema = {
  type: 'object',
  properties: { ...properties, v: { const: ENVELOPE_VERSION } },
  required: [...required, 'v'],
  additionalProperties: false,
} as const;

/** The envelope's known fields, `v` optional as a reader sees it. */
type EnvelopeFields = FromSchema<{ type: 'object'; properties: typeof properties; required: typeof required; additionalProperties: false }>;

/** Every message travels in this envelope (STYLE.md). */
export type Envelope<D = Record<string, unknown>> = Omit<EnvelopeFields, 'data'> & { data: D };

export function newMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}
