import type { FromSchema } from 'json-schema-to-ts';
import { ENVIRONMENTS } from '../api/task.schema.js';

/**
 * Gateway (dashboard) → webhook-dispatcher, request/reply on the queue `dispatcher.admin`:
 * what an account owner manages about webhooks, per environment. Every request names the
 * account and environment it acts for; the dispatcher never touches another account's data.
 *
 * Replies (not validated by the broker; typed below) are `{ok: true, ...}` or
 * `{ok: false, error: {code, message}}` with `code` one of `invalid_request`, `not_found`,
 * `internal_error`.
 */

const id = { type: 'string', minLength: 1, maxLength: 256 } as const;
const env = { type: 'string', enum: ENVIRONMENTS } as const;
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

/** The delivery log: newest events first (or one task's, in version order), each with its attempts. */
export const webhookDeliveriesSchema = {
  type: 'object',
  properties: { ...scope, task_id: id, limit: { type: 'integer', minimum: 1, maximum: 100 } },
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

// ---- replies ----

export interface WebhookAdminError {
  ok: false;
  error: { code: 'invalid_request' | 'not_found' | 'internal_error'; message: string };
}

export interface WebhookEndpointInfo {
  url: string;
  created_at: string;
  updated_at: string;
}

export interface WebhookSecretInfo {
  version: number;
  created_at: string;
  /** The last four characters, for recognising the secret without showing it. */
  last4: string;
  /** Until when the previous secret still signs beside this one (rotation grace), or null. */
  previous_valid_until: string | null;
  /** Only when asked with `reveal_secret`, and in the rotate answer. */
  value?: string;
}

export interface WebhookGetReply {
  ok: true;
  endpoint: WebhookEndpointInfo | null;
  secret: WebhookSecretInfo | null;
}

export interface WebhookSetReply {
  ok: true;
  endpoint: WebhookEndpointInfo;
}

export interface WebhookRotateReply {
  ok: true;
  secret: WebhookSecretInfo & { value: string };
}

export interface WebhookSendTestReply {
  ok: true;
  event_id: string;
  task_id: string;
}

export interface WebhookAttemptInfo {
  attempt: number;
  at: string;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface WebhookDeliveryInfo {
  id: string;
  event: string | null;
  task_id: string;
  status: string;
  occurred_at: string;
  attempts_made: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  /** A test event sent from the dashboard (`webhook.send_test`). */
  test: boolean;
  attempts: WebhookAttemptInfo[];
}

export interface WebhookDeliveriesReply {
  ok: true;
  data: WebhookDeliveryInfo[];
}

export interface WebhookRedeliverReply {
  ok: true;
  delivery: WebhookDeliveryInfo;
}

/** Prefixes that mark a test delivery (dashboard "Send test event"). */
export const TEST_EVENT_ID_PREFIX = 'evt_test_';
export const TEST_TASK_ID_PREFIX = 'task_test';
