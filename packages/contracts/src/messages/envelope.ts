import { randomUUID } from 'node:crypto';
import type { FromSchema } from 'json-schema-to-ts';

/** Every message travels in this envelope (STYLE.md). */
export const envelopeSchema = {
  $id: 'MessageEnvelope',
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1 },
    type: { type: 'string', minLength: 1 },
    source: { type: 'string', minLength: 1 },
    occurred_at: { type: 'string', format: 'date-time' },
    partition_key: { type: 'string' },
    correlation_id: { type: 'string' },
    data: { type: 'object' },
  },
  required: ['id', 'type', 'source', 'occurred_at', 'data'],
  additionalProperties: false,
} as const;
export type Envelope<D = Record<string, unknown>> = Omit<FromSchema<typeof envelopeSchema>, 'data'> & { data: D };

export function newMessageId(): string {
  return `msg_${randomUUID().replaceAll('-', '')}`;
}
