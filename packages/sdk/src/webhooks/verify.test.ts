import {
  assertStandardWebhook,
  computeSignature,
  computeStandardSignature,
  parseWebhook,
  signWebhook,
  verifyStandardWebhook,
  verifyWebhook,
  WebhookVerificationError,
} from './verify.js';
import { startWebhookListener } from './listener.js';

// Vectors computed outside this code base with openssl:
//   printf '%s' "$BODY" | openssl dgst -sha256 -hmac "$SECRET"
//   printf '%s' "$ID.$TS.$BODY" | openssl dgst -sha256 -mac HMAC -macopt hexkey:<secret bytes> -binary | base64
const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8'; // bytes 0x00..0x1f
const SECRET2 = 'whsec_ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8='; // bytes 0x20..0x3f
const BODY = '{"event":"task.complete","task_id":"task_1","timestamp":"2026-01-01T00:00:00.000Z","data":{"ok":true}}';
const HEX = 'a63b7bd90ad2402d2cbd3dfec08c2f2498f72d3e49615d4f7d42e0fdb03d0250';
const HEX2 = '3fe3dcb723d952c243a16a85d2d7151404aa729a4542d7c99a427683161d3613';
const ID = 'evt_task_1_3';
const TS = 1767225600; // 2026-01-01T00:00:00Z
const STD = 'hR9OfG208jStdtgz1PH0N9HergVT81Riw7Y+nvfX9To=';
const STD2 = 'dsiGQFWmJRvcFLrtsW+QFs2UFvQ6VAQcVhV1YyZLza8=';
const AT_TS = TS * 1000;

const std = (signature = `v1,${STD}`, timestamp = String(TS)) => ({
  'webhook-id': ID,
  'webhook-timestamp': timestamp,
  'webhook-signature': signature,
});
/** The same JSON value, serialized again: different whitespace (what a body parser + JSON.stringify does). */
const reserialized = JSON.stringify(JSON.parse(BODY), null, 2);

describe('verifyWebhook (X-Service-Signature)', () => {
  it('computes the openssl vectors: hex HMAC-SHA256 of the raw body keyed with the whole secret string', () => {
    expect(computeSignature(BODY, SECRET)).toBe(HEX);
    expect(computeSignature(Buffer.from(BODY), SECRET2)).toBe(HEX2);
    expect(computeStandardSignature(BODY, ID, TS, SECRET)).toBe(STD);
    expect(computeStandardSignature(BODY, ID, String(TS), SECRET2)).toBe(STD2);
  });

  it('accepts the valid signature over the raw body, as a string, Buffer or Uint8Array', () => {
    expect(verifyWebhook(BODY, HEX, SECRET)).toBe(true);
    expect(verifyWebhook(Buffer.from(BODY), HEX, SECRET)).toBe(true);
    expect(verifyWebhook(new Uint8Array(Buffer.from(BODY)), HEX, SECRET)).toBe(true);
  });

  it('rejects a tampered body', () => {
    expect(verifyWebhook(BODY.replace('true', 'false'), HEX, SECRET)).toBe(false);
    expect(verifyWebhook(`${BODY} `, HEX, SECRET)).toBe(false);
  });

  it('rejects the wrong secret', () => {
    expect(verifyWebhook(BODY, HEX, SECRET2)).toBe(false);
    expect(verifyWebhook(BODY, HEX, 'whsec_wrong')).toBe(false);
  });

  it('rejects a re-serialized body (JSON.stringify(JSON.parse(raw)) with other whitespace)', () => {
    expect(reserialized).not.toBe(BODY);
    expect(JSON.parse(reserialized)).toEqual(JSON.parse(BODY));
    expect(verifyWebhook(reserialized, HEX, SECRET)).toBe(false);
    expect(verifyWebhook(JSON.stringify(JSON.parse(BODY)).replace(':true', ': true'), HEX, SECRET)).toBe(false);
  });

  it('accepts a rotation header with two signatures when either one matches the secret', () => {
    const rotated = `${HEX2},${HEX}`;
    expect(verifyWebhook(BODY, rotated, SECRET)).toBe(true);
    expect(verifyWebhook(BODY, rotated, SECRET2)).toBe(true);
    expect(verifyWebhook(BODY, `${HEX2}, ${HEX}`, SECRET)).toBe(true);
    expect(verifyWebhook(BODY, rotated, 'whsec_ZmFrZQ==')).toBe(false);
    // the receiver may hold both secrets while it rotates on its side
    expect(verifyWebhook(BODY, HEX2, ['whsec_other', SECRET2])).toBe(true);
  });

  it('rejects missing, empty, truncated or non-hex headers without throwing', () => {
    expect(verifyWebhook(BODY, undefined, SECRET)).toBe(false);
    expect(verifyWebhook(BODY, null, SECRET)).toBe(false);
    expect(verifyWebhook(BODY, '', SECRET)).toBe(false);
    expect(verifyWebhook(BODY, ',', SECRET)).toBe(false);
    expect(verifyWebhook(BODY, HEX.slice(0, 63), SECRET)).toBe(false);
    expect(verifyWebhook(BODY, `${HEX}0`, SECRET)).toBe(false);
    expect(verifyWebhook(BODY, 'é'.repeat(32), SECRET)).toBe(false);
  });

  it('takes the secret from SERVICE_WEBHOOK_SECRET by default and refuses to run without one', () => {
    const saved = process.env['SERVICE_WEBHOOK_SECRET'];
    try {
      process.env['SERVICE_WEBHOOK_SECRET'] = SECRET;
      expect(verifyWebhook(BODY, HEX)).toBe(true);
      delete process.env['SERVICE_WEBHOOK_SECRET'];
      expect(() => verifyWebhook(BODY, HEX)).toThrow(/SERVICE_WEBHOOK_SECRET/);
      expect(() => verifyWebhook(BODY, HEX, '')).toThrow(TypeError);
    } finally {
      if (saved === undefined) delete process.env['SERVICE_WEBHOOK_SECRET'];
      else process.env['SERVICE_WEBHOOK_SECRET'] = saved;
    }
  });

  it('refuses a parsed object instead of the raw body (the classic mistake)', () => {
    expect(() => verifyWebhook(JSON.parse(BODY) as unknown as string, HEX, SECRET)).toThrow(/raw request body/);
  });
});

describe('verifyStandardWebhook (webhook-id, webhook-timestamp, webhook-signature)', () => {
  it('accepts the valid signature within the tolerance', () => {
    expect(verifyStandardWebhook(BODY, std(), SECRET, { now: AT_TS })).toBe(true);
    expect(verifyStandardWebhook(BODY, std(), SECRET, { now: AT_TS + 299_000 })).toBe(true);
    expect(verifyStandardWebhook(BODY, std(), SECRET, { now: AT_TS - 299_000 })).toBe(true);
  });

  it('reads fetch Headers and node-style headers with any name case', () => {
    expect(verifyStandardWebhook(BODY, new Headers(std()), SECRET, { now: AT_TS })).toBe(true);
    const upper = { 'Webhook-Id': ID, 'WEBHOOK-TIMESTAMP': String(TS), 'Webhook-Signature': `v1,${STD}` };
    expect(verifyStandardWebhook(BODY, upper, SECRET, { now: AT_TS })).toBe(true);
  });

  it('rejects a stale or future timestamp (replay protection), even with a valid signature', () => {
    expect(verifyStandardWebhook(BODY, std(), SECRET, { now: AT_TS + 301_000 })).toBe(false);
    expect(verifyStandardWebhook(BODY, std(), SECRET, { now: AT_TS - 301_000 })).toBe(false);
    expect(() => assertStandardWebhook(BODY, std(), SECRET, { now: AT_TS + 3_600_000 })).toThrow(
      expect.objectContaining({ code: 'stale_timestamp' }) as Error,
    );
    expect(verifyStandardWebhook(BODY, std(), SECRET, { now: AT_TS + 3_600_000, toleranceSeconds: 7200 })).toBe(true);
    // with the real clock, a 2026-01-01 delivery replayed later is refused
    expect(verifyStandardWebhook(BODY, std(), SECRET)).toBe(Math.abs(Date.now() - AT_TS) <= 300_000);
  });

  it('rejects a timestamp changed to look fresh: it is signed', () => {
    const now = AT_TS + 3_600_000;
    expect(verifyStandardWebhook(BODY, std(`v1,${STD}`, String(now / 1000)), SECRET, { now })).toBe(false);
  });

  it('rejects a tampered body, the wrong secret, a re-serialized body and another webhook-id', () => {
    expect(verifyStandardWebhook(BODY.replace('task_1', 'task_2'), std(), SECRET, { now: AT_TS })).toBe(false);
    expect(verifyStandardWebhook(BODY, std(), SECRET2, { now: AT_TS })).toBe(false);
    expect(verifyStandardWebhook(reserialized, std(), SECRET, { now: AT_TS })).toBe(false);
    expect(verifyStandardWebhook(BODY, { ...std(), 'webhook-id': 'evt_other' }, SECRET, { now: AT_TS })).toBe(false);
  });

  it('accepts a rotation header with two space-separated signatures, either secret verifying', () => {
    const rotated = std(`v1,${STD2} v1,${STD}`);
    expect(verifyStandardWebhook(BODY, rotated, SECRET, { now: AT_TS })).toBe(true);
    expect(verifyStandardWebhook(BODY, rotated, SECRET2, { now: AT_TS })).toBe(true);
    expect(verifyStandardWebhook(BODY, std(`v2,${STD}`), SECRET, { now: AT_TS })).toBe(false);
  });

  it('rejects missing headers and a non-numeric timestamp', () => {
    expect(verifyStandardWebhook(BODY, {}, SECRET, { now: AT_TS })).toBe(false);
    expect(verifyStandardWebhook(BODY, { 'webhook-signature': `v1,${STD}` }, SECRET, { now: AT_TS })).toBe(false);
    expect(verifyStandardWebhook(BODY, std(`v1,${STD}`, '1767225600.5'), SECRET, { now: AT_TS })).toBe(false);
  });
});

describe('parseWebhook', () => {
  it('returns the parsed event after verifying (standard by default, service on request)', () => {
    expect(parseWebhook(BODY, std(), { secret: SECRET, now: AT_TS })).toEqual(JSON.parse(BODY));
    expect(parseWebhook(BODY, { 'x-service-signature': HEX }, { secret: SECRET, scheme: 'service' })).toEqual(JSON.parse(BODY));
  });

  it('says why it refuses', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err instanceof WebhookVerificationError ? err.code : String(err);
      }
      return 'accepted';
    };
    expect(code(() => parseWebhook(BODY, { 'x-service-signature': HEX }, { secret: SECRET }))).toBe('missing_signature');
    expect(code(() => parseWebhook(BODY, std(), { secret: SECRET2, now: AT_TS }))).toBe('invalid_signature');
    expect(code(() => parseWebhook(BODY, std(), { secret: SECRET, now: AT_TS + 600_000 }))).toBe('stale_timestamp');
    expect(code(() => parseWebhook(BODY, {}, { secret: SECRET, scheme: 'service' }))).toBe('missing_signature');
    expect(code(() => parseWebhook(BODY, { 'x-service-signature': HEX2 }, { secret: SECRET, scheme: 'service' }))).toBe(
      'invalid_signature',
    );
    const notJson = 'not json';
    expect(
      code(() =>
        parseWebhook(notJson, { 'x-service-signature': computeSignature(notJson, SECRET) }, { secret: SECRET, scheme: 'service' }),
      ),
    ).toBe('invalid_payload');
    const notEvent = '{"hello":1}';
    expect(
      code(() =>
        parseWebhook(notEvent, { 'x-service-signature': computeSignature(notEvent, SECRET) }, { secret: SECRET, scheme: 'service' }),
      ),
    ).toBe('invalid_payload');
  });
});

describe('signWebhook (every header of a test request)', () => {
  it('gives the openssl vectors as complete header values: v1,<base64> and the hex', () => {
    expect(signWebhook(BODY, SECRET, { id: ID, timestamp: TS })).toEqual({
      'content-type': 'application/json',
      'webhook-id': ID,
      'webhook-timestamp': String(TS),
      'webhook-signature': `v1,${STD}`,
      'x-service-signature': HEX,
    });
    // computeStandardSignature stays the bare signature, without the prefix
    expect(computeStandardSignature(BODY, ID, TS, SECRET)).toBe(STD);
  });

  it('signs with every secret as during a rotation, new first: space separated v1 entries, comma separated hex', () => {
    const h = signWebhook(Buffer.from(BODY), [SECRET, SECRET2], { id: ID, timestamp: TS });
    expect(h['webhook-signature']).toBe(`v1,${STD} v1,${STD2}`);
    expect(h['x-service-signature']).toBe(`${HEX},${HEX2}`);
  });

  it('defaults to a fresh evt_ id and now, which the verifiers accept', () => {
    const a = signWebhook(BODY, SECRET);
    const b = signWebhook(BODY, SECRET);
    expect(a['webhook-id']).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(b['webhook-id']).not.toBe(a['webhook-id']);
    expect(Math.abs(Number(a['webhook-timestamp']) - Date.now() / 1000)).toBeLessThanOrEqual(5);
    expect(parseWebhook(BODY, a, { secret: SECRET })).toEqual(JSON.parse(BODY));
    expect(parseWebhook(BODY, a, { secret: SECRET, scheme: 'service' }).task_id).toBe('task_1');
    expect(verifyStandardWebhook(BODY, a, SECRET2)).toBe(false);
  });

  it('refuses a timestamp that is not unix seconds and runs only with a secret', () => {
    expect(() => signWebhook(BODY, SECRET, { timestamp: 1.5 })).toThrow(TypeError);
    expect(() => signWebhook(BODY, SECRET, { timestamp: -1 })).toThrow(TypeError);
    const saved = process.env['SERVICE_WEBHOOK_SECRET'];
    delete process.env['SERVICE_WEBHOOK_SECRET'];
    try {
      expect(() => signWebhook(BODY)).toThrow(TypeError);
    } finally {
      if (saved !== undefined) process.env['SERVICE_WEBHOOK_SECRET'] = saved;
    }
  });

  it('signs a request a real receiver accepts as sent (fetch to tes webhooks listen); the bare signature gets 401', async () => {
    const events: unknown[] = [];
    const listener = await startWebhookListener({ port: 0, secret: SECRET, onEvent: (e) => events.push(e) });
    try {
      const ok = await fetch(listener.url, { method: 'POST', headers: signWebhook(BODY, SECRET), body: BODY });
      expect(ok.status).toBe(200);
      expect(events).toEqual([JSON.parse(BODY)]);
      const now = Math.floor(Date.now() / 1000);
      const bare = {
        'webhook-id': ID,
        'webhook-timestamp': String(now),
        'webhook-signature': computeStandardSignature(BODY, ID, now, SECRET),
      };
      const refused = await fetch(listener.url, { method: 'POST', headers: bare, body: BODY });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ error: { code: 'invalid_signature' } });
      expect(events).toHaveLength(1);
    } finally {
      await listener.close();
    }
  });
});
