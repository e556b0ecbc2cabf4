import type { FromSchema } from 'json-schema-to-ts';
import { accepted, env, id, nullableString, ts } from './fields.js';
import { EXCHANGES, type MessageDefinition } from './topology.js';

/**
 * Gateway (dashboard) → webhook-dispatcher, request/reply on the queue `dispatcher.admin`:
 * what an account owner manages about webhooks, per environment. Every request names the
 * account and environment it acts for; the dispatcher never touches another account's data.
 *
 * Replies are `{ok: true, ...}` or `{ok: false, error: {code, message}}` with `code` one of
 * `invalid_request`, `not_found`, `internal_error`.
 */

const scope = { account_id: id, environment: env } as const;

/** The endpoint and the current secret's description; with `reveal_secret` the secret itself. */
export const webhookGetSchema = {
  type: 'object',
  properties: { ...scope, reveal_secret: { type: 'boolean' } },
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type WebhookGet = FromSchema<typeof webhookGetSchema>;

/** Sets the endpoint URL (checked by the dispatcher's destination guard); creates the secret if missing. */
export const webhookSetSchema = {
  type: 'object',
  properties: { ...scope, url: { type: 'string', minLength: 1, maxLength: 2048 } },
  required: ['account_id', 'environment', 'url'],
  additionalProperties: false,
} as const;
export type WebhookSet = FromSchema<typeof webhookSetSchema>;

/** A new current secret; the previous one keeps signing beside it for `grace_hours` (default 24). */
export const webhookRotateSecretSchema = {
  type: 'object',
  properties: { ...scope, grace_hours: { type: 'number', minimum: 0, maximum: 720 } },
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type WebhookRotateSecret = FromSchema<typeof webhookRotateSecretSchema>;

/**
 * A test delivery through the normal path (stored event, claim, signed POST, attempt log, retries):
 * a `task.progress` body for a made-up task id `task_test…`, webhook id `evt_test_…`.
 */
export const webhookSendTestSchema = {
  type: 'object',
  properties: scope,
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type WebhookSendTest = FromSchema<typeof webhookSendTestSchema>;

/**
 * The delivery log: newest events first (or one task's, in version order), each with its attempts.
 * With `event_id`: that event alone, in full (its body, and per attempt the URL, the request's
 * headers and the start of the answer), for the attempt inspector.
 */
export const webhookDeliveriesSchema = {
  type: 'object',
  properties: { ...scope, task_id: id, event_id: id, limit: { type: 'integer', minimum: 1, maximum: 100 } },
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type WebhookDeliveries = FromSchema<typeof webhookDeliveriesSchema>;

/** An `undeliverable` (or `no_endpoint`) event of this account environment gets a fresh schedule. */
export const webhookRedeliverSchema = {
  type: 'object',
  properties: { ...scope, event_id: id },
  required: ['account_id', 'environment', 'event_id'],
  additionalProperties: false,
} as const;
export type WebhookRedeliver = FromSchema<typeof webhookRedeliverSchema>;

/**
 * "Resend now": a new attempt of any event of this account environment, now, in its task's order
 * (a final state gets a fresh schedule, a waiting retry is made due now).
 */
export const webhookResendSchema = {
  type: 'object',
  properties: { ...scope, event_id: id },
  required: ['account_id', 'environment', 'event_id'],
  additionalProperties: false,
} as const;

// ---- replies ----

export const webhookAdminErrorSchema = {
  type: 'object',
  properties: {
    ok: { const: false },
    error: {
      type: 'object',
      properties: { code: { type: 'string', enum: ['invalid_request', 'not_found', 'internal_error'] }, message: { type: 'string' } },
      required: ['code', 'message'],
      additionalProperties: false,
    },
  },
  required: ['ok', 'error'],
  additionalProperties: false,
} as const;
export type WebhookAdminError = FromSchema<typeof webhookAdminErrorSchema>;

const nullableTs = { anyOf: [ts, { type: 'null' }] } as const;

export const webhookEndpointInfoSchema = {
  type: 'object',
  properties: { url: { type: 'string' }, created_at: ts, updated_at: ts },
  required: ['url', 'created_at', 'updated_at'],
  additionalProperties: false,
} as const;
export type WebhookEndpointInfo = FromSchema<typeof webhookEndpointInfoSchema>;

const secretInfoProperties = {
  version: { type: 'integer', minimum: 1 },
  created_at: ts,
  /** The last four characters, for recognising the secret without showing it. */
  last4: { type: 'string' },
  /** Until when the previous secret still signs beside this one (rotation grace), or null. */
  previous_valid_until: nullableTs,
  /** Only when asked with `reveal_secret`, and in the rotate answer. */
  value: { type: 'string' },
} as const;

export const webhookSecretInfoSchema = {
  type: 'object',
  properties: secretInfoProperties,
  required: ['version', 'created_at', 'last4', 'previous_valid_until'],
  additionalProperties: false,
} as const;
export type WebhookSecretInfo = FromSchema<typeof webhookSecretInfoSchema>;

export const webhookAttemptInfoSchema = {
  type: 'object',
  properties: {
    attempt: { type: 'integer' },
    at: { type: 'string' },
    status_code: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    latency_ms: { type: 'number' },
    error: nullableString,
    /** With `event_id` only: the URL posted to. */
    url: { type: 'string' },
    /** With `event_id` only: the request's headers as sent (signatures included; never the secret). */
    request_headers: { type: 'object', additionalProperties: { type: 'string' } },
    /** With `event_id` only: the start of the receiver's answer (absent when it did not answer). */
    response: {
      type: 'object',
      properties: { body: { type: 'string' }, truncated: { type: 'boolean' }, content_type: nullableString },
      required: ['body', 'truncated', 'content_type'],
      additionalProperties: false,
    },
  },
  required: ['attempt', 'at', 'status_code', 'latency_ms', 'error'],
  additionalProperties: false,
} as const;
export type WebhookAttemptInfo = FromSchema<typeof webhookAttemptInfoSchema>;

export const webhookDeliveryInfoSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    event: nullableString,
    task_id: { type: 'string' },
    status: { type: 'string' },
    occurred_at: { type: 'string' },
    attempts_made: { type: 'integer' },
    next_attempt_at: nullableString,
    delivered_at: nullableString,
    /** A test event sent from the dashboard (`webhook.send_test`). */
    test: { type: 'boolean' },
    attempts: { type: 'array', items: webhookAttemptInfoSchema },
    /** With `event_id` only: the body every attempt sends, exactly. */
    body: nullableString,
  },
  required: ['id', 'event', 'task_id', 'status', 'occurred_at', 'attempts_made', 'next_attempt_at', 'delivered_at', 'test', 'attempts'],
  additionalProperties: false,
} as const;
export type WebhookDeliveryInfo = FromSchema<typeof webhookDeliveryInfoSchema>;

export const webhookGetReplySchema = accepted(
  { endpoint: { anyOf: [webhookEndpointInfoSchema, { type: 'null' }] }, secret: { anyOf: [webhookSecretInfoSchema, { type: 'null' }] } },
  ['endpoint', 'secret'],
);
export type WebhookGetReply = FromSchema<typeof webhookGetReplySchema>;

export const webhookSetReplySchema = accepted({ endpoint: webhookEndpointInfoSchema }, ['endpoint']);
export type WebhookSetReply = FromSchema<typeof webhookSetReplySchema>;

export const webhookRotateReplySchema = accepted(
  { secret: { ...webhookSecretInfoSchema, required: [...webhookSecretInfoSchema.required, 'value'] } },
  ['secret'],
);
export type WebhookRotateReply = FromSchema<typeof webhookRotateReplySchema>;

export const webhookSendTestReplySchema = accepted({ event_id: { type: 'string' }, task_id: { type: 'string' } }, ['event_id', 'task_id']);
export type WebhookSendTestReply = FromSchema<typeof webhookSendTestReplySchema>;

export const webhookDeliveriesReplySchema = accepted({ data: { type: 'array', items: webhookDeliveryInfoSchema } }, ['data']);
export type WebhookDeliveriesReply = FromSchema<typeof webhookDeliveriesReplySchema>;

export const webhookRedeliverReplySchema = accepted({ delivery: webhookDeliveryInfoSchema }, ['delivery']);
export type WebhookRedeliverReply = FromSchema<typeof webhookRedeliverReplySchema>;

export const webhookResendReplySchema = accepted(
  { delivery: webhookDeliveryInfoSchema, effect: { type: 'string', enum: ['scheduled', 'due_now', 'already_due'] } },
  ['delivery', 'effect'],
);

const admin = { exchange: EXCHANGES.commands, routingKey: 'dispatcher.admin', partitioned: false } as const;
const orRefusal = <const S extends object>(ok: S) => ({ anyOf: [ok, webhookAdminErrorSchema] }) as const;

export const DISPATCHER_MESSAGES = {
  'webhook.get': { ...admin, schema: webhookGetSchema, reply: orRefusal(webhookGetReplySchema) },
  'webhook.set': { ...admin, schema: webhookSetSchema, reply: orRefusal(webhookSetReplySchema) },
  'webhook.rotate_secret': { ...admin, schema: webhookRotateSecretSchema, reply: orRefusal(webhookRotateReplySchema) },
  'webhook.send_test': { ...admin, schema: webhookSendTestSchema, reply: orRefusal(webhookSendTestReplySchema) },
  'webhook.deliveries': { ...admin, schema: webhookDeliveriesSchema, reply: orRefusal(webhookDeliveriesReplySchema) },
  'webhook.redeliver': { ...admin, schema: webhookRedeliverSchema, reply: orRefusal(webhookRedeliverReplySchema) },
  'webhook.resend': { ...admin, schema: webhookResendSchema, reply: orRefusal(webhookResendReplySchema) },
} as const satisfies Record<string, MessageDefinition>;

/** Prefixes that mark a test delivery (dashboard "Send test event"). */
export const TEST_EVENT_ID_PREFIX = 'evt_test_';
export const TEST_TASK_ID_PREFIX = 'task_test';
