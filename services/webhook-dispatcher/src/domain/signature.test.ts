import { signDelivery, serviceSignature, standardSignature, verifyServiceSignature, verifyStandardSignature } from './signature.js';
import { generateSecret, isSecret, signingSecrets, type SecretVersion } from './secret.js';

// Vector computed outside this code base (openssl dgst -sha256 -hmac / -macopt hexkey).
const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8'; // bytes 0x00..0x1f
const BODY = '{"event":"task.complete","task_id":"task_1","timestamp":"2026-01-01T00:00:00.000Z","data":{"ok":true}}';
const HEX = 'a63b7bd90ad2402d2cbd3dfec08c2f2498f72d3e49615d4f7d42e0fdb03d0250';
const STD = 'hR9OfG208jStdtgz1PH0N9HergVT81Riw7Y+nvfX9To=';

describe('webhook signatures', () => {
  it('X-Service-Signature is the hex HMAC-SHA256 of the raw body keyed with the whole secret string', () => {
    expect(serviceSignature(SECRET, BODY)).toBe(HEX);
  });

  it('webhook-signature is v1,base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret bytes', () => {
    expect(standardSignature(SECRET, 'evt_task_1_3', 1767225600, BODY)).toBe(STD);
    const h = signDelivery({ secrets: [SECRET], eventId: 'evt_task_1_3', rawBody: BODY, timestamp: 1767225600 });
    expect(h).toEqual({
      'x-service-signature': HEX,
      'webhook-id': 'evt_task_1_3',
      'webhook-timestamp': '1767225600',
      'webhook-signature': `v1,${STD}`,
    });
  });

  it('verifies the untouched body and rejects a tampered body or another secret', () => {
    const other = generateSecret();
    expect(verifyServiceSignature(HEX, BODY, SECRET)).toBe(true);
    expect(verifyServiceSignature(HEX, BODY.replace('true', 'false'), SECRET)).toBe(false);
    expect(verifyServiceSignature(HEX, BODY, other)).toBe(false);
    const std = { id: 'evt_task_1_3', timestamp: '1767225600', signature: `v1,${STD}` };
    expect(verifyStandardSignature(std, BODY, SECRET)).toBe(true);
    expect(verifyStandardSignature({ ...std, timestamp: '1767225601' }, BODY, SECRET)).toBe(false);
    expect(verifyStandardSignature(std, `${BODY} `, SECRET)).toBe(false);
    expect(verifyStandardSignature(std, BODY, other)).toBe(false);
  });

  it('signs with both secrets during a rotation grace period, current first, and either verifies', () => {
    const previous = generateSecret();
    const h = signDelivery({ secrets: [SECRET, previous], eventId: 'evt_1', rawBody: BODY, timestamp: 1 });
    expect(h['x-service-signature'].split(',')).toEqual([HEX, serviceSignature(previous, BODY)]);
    expect(h['webhook-signature'].split(' ')).toHaveLength(2);
    for (const s of [SECRET, previous]) {
      expect(verifyServiceSignature(h['x-service-signature'], BODY, s)).toBe(true);
      expect(verifyStandardSignature({ id: 'evt_1', timestamp: '1', signature: h['webhook-signature'] }, BODY, s)).toBe(true);
    }
  });

  it('refuses to sign without a secret', () => {
    expect(() => signDelivery({ secrets: [], eventId: 'e', rawBody: BODY, timestamp: 1 })).toThrow('no signing secret');
  });
});

describe('secrets', () => {
  it('are whsec_ plus 32 random bytes in standard base64', () => {
    const s = generateSecret();
    expect(isSecret(s)).toBe(true);
    expect(Buffer.from(s.slice(6), 'base64')).toHaveLength(32);
    expect(generateSecret()).not.toBe(s);
  });

  it('the previous version signs only until the grace period of the newest ends', () => {
    const now = new Date('2026-01-01T12:00:00Z');
    const v1: SecretVersion = { version: 1, secret: 'whsec_old', created_at: new Date('2025-01-01'), previous_valid_until: null };
    const v2 = (until: string | null): SecretVersion => ({
      version: 2,
      secret: 'whsec_new',
      created_at: now,
      previous_valid_until: until ? new Date(until) : null,
    });
    expect(signingSecrets([v2('2026-01-02T00:00:00Z'), v1], now)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets([v2('2026-01-01T11:59:59Z'), v1], now)).toEqual(['whsec_new']);
    expect(signingSecrets([v2(null), v1], now)).toEqual(['whsec_new']);
    expect(signingSecrets([v1], now)).toEqual(['whsec_old']);
    expect(signingSecrets([], now)).toEqual([]);
  });
});
