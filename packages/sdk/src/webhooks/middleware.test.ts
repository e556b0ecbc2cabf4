import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import type { WebhookEvent } from '../types.js';
import { startWebhookListener } from './listener.js';
import { webhookMiddleware } from './middleware.js';
import { computeSignature, computeStandardSignature } from './verify.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const EVENT = { event: 'task.complete', task_id: 'task_abc', timestamp: '2026-01-01T00:00:00.000Z', data: { text: 'hello "world"', n: 1 } };
// Deliberately not what JSON.stringify produces: a verifier that re-serializes would fail.
const RAW =
  '{"event":"task.complete", "task_id":"task_abc","timestamp":"2026-01-01T00:00:00.000Z","data":{"text":"hello \\"world\\"","n":1.0}}';

function signed(raw: string, { secret = SECRET, id = 'evt_task_abc_4', ts = Math.floor(Date.now() / 1000) } = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-service-signature': computeSignature(raw, secret),
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': `v1,${computeStandardSignature(raw, id, ts, secret)}`,
  };
}

interface Seen {
  event: WebhookEvent | undefined;
  id: string | undefined;
  raw: string;
}

/** A real express app on a real port; `setup` mounts what comes before the webhook route. */
async function app(setup: (a: express.Express) => void, options: Parameters<typeof webhookMiddleware>[0] = { secret: SECRET }) {
  const a = express();
  const seen: Seen[] = [];
  const errors: string[] = [];
  setup(a);
  a.post('/webhooks', webhookMiddleware(options), (req, res) => {
    seen.push({
      event: req.webhookEvent,
      id: req.webhookId,
      raw: Buffer.isBuffer((req as { rawBody?: unknown }).rawBody) ? String((req as { rawBody?: Buffer }).rawBody) : '',
    });
    res.status(200).send('ok');
  });
  const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => {
    errors.push(err.message);
    res.status(500).json({ error: { code: 'internal_error', message: err.message } });
  };
  a.use(onError);
  const server: Server = await new Promise((resolve) => {
    const s = a.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return {
    seen,
    errors,
    post: async (body: string, headers: Record<string, string>) => {
      const res = await fetch(url, { method: 'POST', body, headers });
      return { status: res.status, json: (await res.json().catch(() => undefined)) as { error?: { code: string } } | undefined };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('webhookMiddleware in a real express app', () => {
  it('verifies the raw bytes and sets req.webhookEvent and req.webhookId', async () => {
    const a = await app(() => {});
    try {
      const r = await a.post(RAW, signed(RAW));
      expect(r.status).toBe(200);
      expect(a.seen).toEqual([{ event: EVENT, id: 'evt_task_abc_4', raw: RAW }]);
    } finally {
      await a.close();
    }
  });

  it('answers 401 for a tampered body, the wrong secret, a stale timestamp or no signature, and never calls the handler', async () => {
    const a = await app(() => {});
    try {
      const tampered = await a.post(RAW.replace('hello', 'HELLO'), signed(RAW));
      expect([tampered.status, tampered.json?.error?.code]).toEqual([401, 'invalid_signature']);
      const wrong = await a.post(RAW, signed(RAW, { secret: `whsec_${randomBytes(32).toString('base64')}` }));
      expect([wrong.status, wrong.json?.error?.code]).toEqual([401, 'invalid_signature']);
      const stale = await a.post(RAW, signed(RAW, { ts: Math.floor(Date.now() / 1000) - 600 }));
      expect([stale.status, stale.json?.error?.code]).toEqual([401, 'stale_timestamp']);
      const none = await a.post(RAW, { 'content-type': 'application/json' });
      expect([none.status, none.json?.error?.code]).toEqual([401, 'missing_signature']);
      expect(a.seen).toEqual([]);
    } finally {
      await a.close();
    }
  });

  it('answers 400 for a correctly signed body that is not a webhook event', async () => {
    const a = await app(() => {});
    try {
      const body = '{"not":"an event"}';
      const r = await a.post(body, signed(body));
      expect([r.status, r.json?.error?.code]).toEqual([400, 'invalid_payload']);
      expect(a.seen).toEqual([]);
    } finally {
      await a.close();
    }
  });

  it('refuses, as a wiring error, a body that express.json() already parsed: it never verifies a re-serialized body', async () => {
    const a = await app((x) => x.use(express.json()));
    try {
      const r = await a.post(RAW, signed(RAW));
      expect(r.status).toBe(500);
      expect(a.errors[0]).toMatch(/already read.*express\.raw/s);
      expect(a.seen).toEqual([]);
    } finally {
      await a.close();
    }
  });

  it('works after express.raw() and after express.json({ verify }) that keeps req.rawBody', async () => {
    const raw = await app((x) => x.use(express.raw({ type: 'application/json' })));
    const kept = await app((x) =>
      x.use(
        express.json({
          verify: (req, _res, buf) => {
            (req as { rawBody?: Buffer }).rawBody = buf;
          },
        }),
      ),
    );
    try {
      expect((await raw.post(RAW, signed(RAW))).status).toBe(200);
      expect(raw.seen[0]?.event).toEqual(EVENT);
      expect((await kept.post(RAW, signed(RAW))).status).toBe(200);
      expect(kept.seen[0]?.event).toEqual(EVENT);
      expect((await kept.post(RAW, signed(RAW.replace('abc', 'abd')))).status).toBe(401);
    } finally {
      await raw.close();
      await kept.close();
    }
  });

  it('verifies X-Service-Signature alone with scheme "service", and answers 413 over limitBytes', async () => {
    const a = await app(() => {}, { secret: SECRET, scheme: 'service', limitBytes: 200 });
    try {
      expect((await a.post(RAW, { 'x-service-signature': computeSignature(RAW, SECRET) })).status).toBe(200);
      expect((await a.post(RAW, { 'x-service-signature': computeSignature(`${RAW} `, SECRET) })).status).toBe(401);
      const big = JSON.stringify({ ...EVENT, data: { text: 'x'.repeat(500) } });
      const r = await a.post(big, { 'x-service-signature': computeSignature(big, SECRET) });
      expect([r.status, r.json?.error?.code]).toEqual([413, 'payload_too_large']);
      expect(a.seen).toHaveLength(1);
    } finally {
      await a.close();
    }
  });
});

describe('startWebhookListener (plain node:http, what `tes webhooks listen` runs)', () => {
  it('hands verified events over and answers 200; 401 for a bad signature, 405 for GET', async () => {
    const events: unknown[] = [];
    const rejected: unknown[] = [];
    const l = await startWebhookListener({
      port: 0,
      secret: SECRET,
      onEvent: (e, meta) => events.push({ e, meta }),
      onRejected: (r) => rejected.push(r),
    });
    try {
      const ok = await fetch(`${l.url}hooks`, { method: 'POST', body: RAW, headers: signed(RAW) });
      expect(ok.status).toBe(200);
      const bad = await fetch(l.url, { method: 'POST', body: RAW, headers: signed(RAW, { secret: 'whsec_AAAA' }) });
      expect(bad.status).toBe(401);
      expect((await fetch(l.url)).status).toBe(405);
      expect(events).toEqual([{ e: EVENT, meta: { webhookId: 'evt_task_abc_4', path: '/hooks' } }]);
      expect(rejected).toEqual([
        { status: 401, code: 'invalid_signature', message: expect.any(String), path: '/' },
        { status: 405, code: 'method_not_allowed', message: expect.any(String), path: '/' },
      ]);
    } finally {
      await l.close();
    }
  });
});
