import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { SECRET_PREFIX } from './secret.js';

/**
 * Two signatures per delivery, over the exact bytes sent:
 * - `X-Service-Signature` (spec 5.5): hex HMAC-SHA256 of the raw body, keyed with the whole
 *   secret string as the receiver holds it (`whsec_...`, UTF-8).
 * - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 *   keyed with the secret's 32 bytes (the part after `whsec_`, base64-decoded).
 * While a rotated-out secret is in its grace period each header carries one signature per
 * secret, current first: comma separated in X-Service-Signature, space separated in
 * webhook-signature (as Standard Webhooks does).
 */
export interface SignedHeaders {
  'x-service-signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function serviceSignature(secret: string, rawBody: string): string {
  return createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex');
}

/** The HMAC key of the Standard Webhooks signature: the secret's random bytes. */
export function secretKeyBytes(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/**
 * The Standard Webhooks key of each secret, made once: createHmac given the bytes themselves
 * costs Node several times the HMAC (about 15 us against 2 here), every delivery. At most
 * KEYS_MAX secrets (a replica signs for its accounts' current and previous secrets), then
 * forgotten and made again.
 */
const standardKeys = new Map<string, KeyObject>();
const KEYS_MAX = 4096;

function standardKey(secret: string): KeyObject {
  let key = standardKeys.get(secret);
  if (!key) {
    key = createSecretKey(secretKeyBytes(secret));
    if (standardKeys.size >= KEYS_MAX) standardKeys.clear();
    standardKeys.set(secret, key);
  }
  return key;
}

export function standardSignature(secret: string, id: string, timestamp: number | string, rawBody: string): string {
  return createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.${rawBody}`, 'utf8').digest('base64');
}

export function signDelivery(input: { secrets: readonly string[]; eventId: string; rawBody: string; timestamp: number }): SignedHeaders {
  if (input.secrets.length === 0) throw new Error('no signing secret');
  return {
    'x-service-signature': input.secrets.map((s) => serviceSignature(s, input.rawBody)).join(','),
    'webhook-id': input.eventId,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': input.secrets.map((s) => `v1,${standardSignature(s, input.eventId, input.timestamp, input.rawBody)}`).join(' '),
  };
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Receiver side of X-Service-Signature: true when any listed signature matches. */
export function verifyServiceSignature(header: string, rawBody: string, secret: string): boolean {
  const expected = serviceSignature(secret, rawBody);
  return header.split(',').some((sig) => safeEqual(sig.trim(), expected));
}

/** Receiver side of webhook-signature: true when any `v1,` signature matches. */
export function verifyStandardSignature(
  headers: { id: string; timestamp: string; signature: string },
  rawBody: string,
  secret: string,
): boolean {
  const expected = standardSignature(secret, headers.id, headers.timestamp, rawBody);
  return headers.signature
    .split(' ')
    .filter((part) => part.startsWith('v1,'))
    .some((part) => safeEqual(part.slice(3), expected));
}
