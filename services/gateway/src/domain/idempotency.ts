import { createHash } from 'node:crypto';
import type { Environment } from '@tes/contracts';

/** Spec 8.4: keys are valid for 24 hours. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export function isValidIdempotencyKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Keys are scoped per account and environment: the same key in test and live are two keys. */
export function idempotencyRecordId(accountId: string, environment: Environment, key: string): string {
  return `${accountId}:${environment}:${key}`;
}

/**
 * JSON with object keys sorted at every depth: two bodies that are the same JSON
 * value (whatever their key order or whitespace) serialize the same.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** SHA-256 of the canonical body: "same body" means the same JSON value. */
export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

export type IdempotencyState = 'in_progress' | 'complete' | 'retryable';

export interface IdempotencyRecordView {
  body_hash: string;
  state: IdempotencyState;
  expires_at: Date;
  /** When the request holding the record started (or last took it over). */
  locked_at: Date;
}

export type IdempotencyVerdict =
  /** The record has expired: treat the key as never seen. */
  | 'expired'
  /** Same key, another body: 409 idempotency_key_reused. */
  | 'reused'
  /** Same key and body, the first request still running: 409 idempotency_key_in_progress. */
  | 'in_progress'
  /** Same key and body, answered: send the stored answer again. */
  | 'replay'
  /** Same key and body, the first attempt failed transiently or was abandoned: run again with the same task id. */
  | 'retry';

/**
 * What a request that lost the insert race (or found an existing record) does.
 * `leaseMs` is how long an `in_progress` record is believed before it counts as
 * abandoned (its gateway died mid-request).
 */
export function judge(record: IdempotencyRecordView, hash: string, nowMs: number, leaseMs: number): IdempotencyVerdict {
  if (record.expires_at.getTime() <= nowMs) return 'expired';
  if (record.body_hash !== hash) return 'reused';
  if (record.state === 'complete') return 'replay';
  if (record.state === 'retryable') return 'retry';
  return nowMs - record.locked_at.getTime() >= leaseMs ? 'retry' : 'in_progress';
}

/**
 * Which answers are stored for replay: the ones that say what happened to the task
 * (created, or refused by the orchestrator for a reason that will not change).
 * Transient failures (5xx) are not stored: the key can be retried and reuses the
 * same task id, so a task the orchestrator did create is never created twice.
 */
export function isFinalStatus(status: number): boolean {
  return status < 500;
}
