import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from '../types.js';

/**
 * Receiver side of the two signatures every delivery carries (docs/webhooks.md):
 *
 * - `X-Service-Signature` (spec 5.5): hex HMAC-SHA256 of the raw body, keyed with the secret
 *   string as shown (`whsec_...`, UTF-8). No timestamp: it proves origin, not freshness.
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` (unix seconds) and
 *   `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the
 *   secret's bytes (the base64 after `whsec_`). The timestamp is signed, so a stale one
 *   means a replay.
 *
 * During a secret rotation each header carries one signature per secret (comma separated in
 * X-Service-Signature, space separated in webhook-signature); one match is enough.
 * Comparisons are constant-time. Always verify the bytes as received: a body parsed and
 * serialized again (other whitespace, key order, escaping) no longer matches.
 */

/** The raw request body exactly as received (a Buffer is a Uint8Array). */
export type RawBody = string | Uint8Array;

/** Fetch `Headers`, node's `req.headers`, or a plain object (names matched case-insensitively). */
export type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

/** One secret, or several while you rotate on your side (any of them may match). */
export type WebhookSecret = string | readonly string[];

export const SECRET_PREFIX = 'whsec_';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookErrorCode = 'missing_signature' | 'invalid_signature' | 'stale_timestamp' | 'invalid_payload';

export class WebhookVerificationError extends Error {
  constructor(
    readonly code: WebhookErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

function bytes(rawBody: RawBody): Buffer {
  if (typeof rawBody === 'string') return Buffer.from(rawBody, 'utf8');
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
  throw new TypeError('rawBody must be the raw request body (string or Buffer) exactly as received, not a parsed object');
}

function secrets(secret: WebhookSecret | undefined): string[] {
  const list = (typeof secret === 'string' ? [secret] : [...(secret ?? [])]).filter((s) => s !== '');
  if (list.length === 0) throw new TypeError('no webhook secret: pass one or set SERVICE_WEBHOOK_SECRET');
  return list;
}

function envSecret(): string | undefined {
  return process.env['SERVICE_WEBHOOK_SECRET'];
}

/** Constant-time for equal lengths; different lengths are unequal without comparing. */
function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The `X-Service-Signature` value for one secret (hex). To sign a whole test request, see {@link signWebhook}. */
export function computeSignature(rawBody: RawBody, secret: string): string {
  return createHmac('sha256', secret).update(bytes(rawBody)).digest('hex');
}

/** The Standard Webhooks key: the bytes after `whsec_`, base64-decoded. */
function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/**
 * The bare Standard Webhooks signature for one secret: base64 WITHOUT the `v1,` prefix, so not a
 * `webhook-signature` header value by itself (that is `v1,` + this). To sign a test request,
 * use {@link signWebhook}, which gives every header ready to send.
 */
export function computeStandardSignature(rawBody: RawBody, id: string, timestamp: number | string, secret: string): string {
  return createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`, 'utf8').update(bytes(rawBody)).digest('base64');
}

/** The headers of a delivery, as the service sends them (lower-case names; fetch and node:http take them as they are). */
export type SignedWebhookHeaders = {
  'content-type': 'application/json';
  /** The event id: keep it across retries of one event, receivers dedup on it. */
  'webhook-id': string;
  /** Unix seconds. */
  'webhook-timestamp': string;
  /** `v1,<base64>`, one per secret, space separated. */
  'webhook-signature': string;
  /** Hex, one per secret, comma separated (spec 5.5). */
  'x-service-signature': string;
};

export interface SignWebhookOptions {
  /** `webhook-id`. Default: a new `evt_…` id. */
  id?: string | undefined;
  /** `webhook-timestamp` in unix seconds. Default: now. */
  timestamp?: number | undefined;
}

/**
 * Signs `rawBody` the way the service signs a delivery and returns every header to send with
 * it: `webhook-id`, `webhook-timestamp`, `webhook-signature` (`v1,<base64>`) and
 * `X-Service-Signature`. For testing a receiver: `fetch(url, { method: 'POST', headers:
 * signWebhook(body, secret), body })`. Several secrets sign as during a rotation.
 */
export function signWebhook(
  rawBody: RawBody,
  secret: WebhookSecret | undefined = envSecret(),
  options: SignWebhookOptions = {},
): SignedWebhookHeaders {
  const keys = secrets(secret);
  const body = bytes(rawBody);
  const id = options.id ?? `evt_${randomUUID().replaceAll('-', '')}`;
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  if (!/^\d{1,12}$/.test(timestamp)) throw new TypeError('timestamp must be unix seconds (a non-negative integer)');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': keys.map((key) => `v1,${computeStandardSignature(body, id, timestamp, key)}`).join(' '),
    'x-service-signature': keys.map((key) => computeSignature(body, key)).join(','),
  };
}

/**
 * Verifies `X-Service-Signature` (spec 5.5): true when one of the comma-separated signatures
 * in the header is the hex HMAC-SHA256 of `rawBody` with `secret`. Missing header: false.
 * Throws TypeError when no secret is given and `SERVICE_WEBHOOK_SECRET` is unset.
 */
export function verifyWebhook(
  rawBody: RawBody,
  signatureHeader: string | readonly string[] | null | undefined,
  secret: WebhookSecret | undefined = envSecret(),
): boolean {
  const keys = secrets(secret);
  const body = bytes(rawBody);
  const header = typeof signatureHeader === 'string' ? signatureHeader : (signatureHeader ?? []).join(',');
  const given = header
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (given.length === 0) return false;
  let ok = false;
  for (const key of keys) {
    const expected = computeSignature(body, key);
    // no early exit: the time taken does not tell which signature matched
    for (const sig of given) ok = safeEqual(sig, expected) || ok;
  }
  return ok;
}

export interface StandardVerifyOptions {
  /** Largest accepted distance between `webhook-timestamp` and now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** Now, in milliseconds (tests). */
  now?: number;
}

/** Header value by case-insensitive name. */
export function headerOf(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(record)) {
    if (k.toLowerCase() === lower) return Array.isArray(v) ? v.join(', ') : v;
  }
  return undefined;
}

/**
 * Verifies the Standard Webhooks headers and throws a {@link WebhookVerificationError} saying
 * why when they do not verify: missing headers, a timestamp outside the tolerance (a replay
 * or a badly wrong clock), or no matching `v1` signature.
 */
export function assertStandardWebhook(
  rawBody: RawBody,
  headers: HeadersLike,
  secret: WebhookSecret | undefined = envSecret(),
  options: StandardVerifyOptions = {},
): void {
  const keys = secrets(secret);
  const body = bytes(rawBody);
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  const signature = headerOf(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) {
    throw new WebhookVerificationError('missing_signature', 'webhook-id, webhook-timestamp and webhook-signature headers are required');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('invalid_signature', 'webhook-timestamp is not unix seconds');
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('stale_timestamp', `webhook-timestamp is more than ${tolerance} s away from now`);
  }
  const given = signature
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .map((part) => part.slice(3));
  let ok = false;
  for (const key of keys) {
    const expected = computeStandardSignature(body, id, timestamp, key);
    for (const sig of given) ok = safeEqual(sig, expected) || ok;
  }
  if (!ok) throw new WebhookVerificationError('invalid_signature', 'no webhook-signature matches the body and the secret');
}

/**
 * Verifies the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`): true only when a `v1` signature matches AND the timestamp is within
 * `toleranceSeconds` (default 300) of now, so a captured delivery cannot be replayed later.
 * Dedup `webhook-id` too: it is the same on every attempt of one event.
 */
export function verifyStandardWebhook(
  rawBody: RawBody,
  headers: HeadersLike,
  secret: WebhookSecret | undefined = envSecret(),
  options: StandardVerifyOptions = {},
): boolean {
  try {
    assertStandardWebhook(rawBody, headers, secret, options);
    return true;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false;
    throw err;
  }
}

/**
 * Which signature a receiver requires:
 * - `standard` (default): the Standard Webhooks headers, timestamp checked (replay protection).
 * - `service`: only the spec's `X-Service-Signature` (no timestamp, so no replay protection);
 *   for senders that send nothing else.
 */
export type SignatureScheme = 'standard' | 'service';

export interface ParseWebhookOptions extends StandardVerifyOptions {
  /** Default: `SERVICE_WEBHOOK_SECRET`. */
  secret?: WebhookSecret | undefined;
  scheme?: SignatureScheme;
}

/**
 * Verifies a delivery and returns its parsed event, or throws a
 * {@link WebhookVerificationError} (`missing_signature`, `invalid_signature`,
 * `stale_timestamp`, `invalid_payload`). For any framework that gives you the raw body.
 */
export function parseWebhook(rawBody: RawBody, headers: HeadersLike, options: ParseWebhookOptions = {}): WebhookEvent {
  const secret = options.secret ?? envSecret();
  if ((options.scheme ?? 'standard') === 'standard') {
    assertStandardWebhook(rawBody, headers, secret, options);
  } else {
    const header = headerOf(headers, 'x-service-signature');
    if (!header) throw new WebhookVerificationError('missing_signature', 'X-Service-Signature header is required');
    if (!verifyWebhook(rawBody, header, secret)) {
      throw new WebhookVerificationError('invalid_signature', 'X-Service-Signature does not match the body and the secret');
    }
  }
  let event: unknown;
  try {
    event = JSON.parse(bytes(rawBody).toString('utf8'));
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the body is not JSON');
  }
  if (!isWebhookEvent(event)) throw new WebhookVerificationError('invalid_payload', 'the body is not a webhook event');
  return event;
}

/**
 * The envelope of spec 6.1. Any `event` name is accepted (a kind added later must not make
 * receivers answer 400 forever): switch on `event` and answer 200 to kinds you do not know.
 */
function isWebhookEvent(v: unknown): v is WebhookEvent {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e['event'] === 'string' &&
    typeof e['task_id'] === 'string' &&
    typeof e['timestamp'] === 'string' &&
    typeof e['data'] === 'object' &&
    e['data'] !== null
  );
}
