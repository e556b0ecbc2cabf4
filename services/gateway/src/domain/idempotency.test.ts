import {
  bodyHash,
  canonicalJson,
  idempotencyRecordId,
  isFinalStatus,
  isValidIdempotencyKey,
  judge,
  type IdempotencyRecordView,
} from './idempotency.js';

describe('Idempotency-Key format', () => {
  it('accepts 1 to 255 printable ASCII characters', () => {
    expect(isValidIdempotencyKey('a')).toBe(true);
    expect(isValidIdempotencyKey('x'.repeat(255))).toBe(true);
    expect(isValidIdempotencyKey('order 42: retry #1 ~!@$%^&*()')).toBe(true);
    expect(isValidIdempotencyKey('550e8400-e29b-41d4-a716-446655440000')).toBe(true);
  });

  it('refuses empty, too long, control and non-ASCII keys', () => {
    expect(isValidIdempotencyKey('')).toBe(false);
    expect(isValidIdempotencyKey('x'.repeat(256))).toBe(false);
    expect(isValidIdempotencyKey('tab\there')).toBe(false);
    expect(isValidIdempotencyKey('del\x7f')).toBe(false);
    expect(isValidIdempotencyKey('clé')).toBe(false);
    expect(isValidIdempotencyKey('😀')).toBe(false);
  });

  it('scopes keys per account and environment', () => {
    expect(idempotencyRecordId('acct_1', 'test', 'k')).not.toBe(idempotencyRecordId('acct_1', 'live', 'k'));
    expect(idempotencyRecordId('acct_1', 'test', 'k')).not.toBe(idempotencyRecordId('acct_2', 'test', 'k'));
  });
});

describe('body hashing', () => {
  it('ignores key order and whitespace: the same JSON value hashes the same', () => {
    const a = JSON.parse('{"prompt":"Echo \\"x\\"","metadata":{"b":1,"a":[1,{"z":true,"y":null}]}}');
    const b = JSON.parse('{ "metadata": { "a": [1, {"y": null, "z": true}], "b": 1 },  "prompt": "Echo \\"x\\"" }');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(bodyHash(a)).toBe(bodyHash(b));
  });

  it('tells different values apart, including array order, types and extra fields', () => {
    expect(bodyHash({ prompt: 'a' })).not.toBe(bodyHash({ prompt: 'b' }));
    expect(bodyHash({ a: [1, 2] })).not.toBe(bodyHash({ a: [2, 1] }));
    expect(bodyHash({ a: 1 })).not.toBe(bodyHash({ a: '1' }));
    expect(bodyHash({ prompt: 'a' })).not.toBe(bodyHash({ prompt: 'a', metadata: {} }));
    expect(bodyHash({ prompt: 'a', user_id: null })).not.toBe(bodyHash({ prompt: 'a' }));
  });

  it('is a hex SHA-256', () => {
    expect(bodyHash({ prompt: 'x' })).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('judging an existing record', () => {
  const now = Date.UTC(2026, 0, 2);
  const lease = 30_000;
  const rec = (over: Partial<IdempotencyRecordView> = {}): IdempotencyRecordView => ({
    body_hash: 'h',
    state: 'in_progress',
    expires_at: new Date(now + 1000),
    locked_at: new Date(now - 1000),
    ...over,
  });

  it('treats an expired record as absent, whatever it holds', () => {
    expect(judge(rec({ expires_at: new Date(now) }), 'h', now, lease)).toBe('expired');
    expect(judge(rec({ expires_at: new Date(now - 1), body_hash: 'other' }), 'h', now, lease)).toBe('expired');
  });

  it('refuses another body before anything else', () => {
    expect(judge(rec({ state: 'complete' }), 'other', now, lease)).toBe('reused');
    expect(judge(rec({ state: 'in_progress' }), 'other', now, lease)).toBe('reused');
  });

  it('replays an answered record, says in progress while the holder runs, retries a released or abandoned one', () => {
    expect(judge(rec({ state: 'complete' }), 'h', now, lease)).toBe('replay');
    expect(judge(rec({ state: 'in_progress' }), 'h', now, lease)).toBe('in_progress');
    expect(judge(rec({ state: 'retryable' }), 'h', now, lease)).toBe('retry');
    expect(judge(rec({ state: 'in_progress', locked_at: new Date(now - lease) }), 'h', now, lease)).toBe('retry');
  });

  it('stores final answers (2xx, 4xx) and not transient ones (5xx)', () => {
    expect(isFinalStatus(201)).toBe(true);
    expect(isFinalStatus(422)).toBe(true);
    expect(isFinalStatus(500)).toBe(false);
    expect(isFinalStatus(503)).toBe(false);
  });
});
