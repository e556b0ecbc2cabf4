import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HttpSender } from '../delivery/http-sender.js';
import { policyFor } from './ssrf-guard.js';

/**
 * Issue 20, finding 3: a test endpoint on 127.0.0.1 and "Send test event" read every internal
 * port through the delivery log ("connection refused", "HTTP 404 · 2 ms"). Private targets are
 * now refused in both environments unless OUTBOUND_ALLOW_PRIVATE is on, and a refused delivery
 * says the same whatever is at the address.
 */
describe('webhook destinations (the outbound policy)', () => {
  const none = { allowedHosts: new Set<string>() };
  const dev = { allowedHosts: new Set<string>(), allowPrivate: true };
  let answering: http.Server;
  let answeringUrl: string;
  let closedUrl: string;
  let hits = 0;

  beforeAll(async () => {
    answering = http.createServer((_req, res) => {
      hits++;
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => answering.listen(0, '127.0.0.1', r));
    answeringUrl = `http://127.0.0.1:${(answering.address() as AddressInfo).port}/`;
    // A port with nothing behind it.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/`;
    await new Promise((r) => probe.close(r));
  });
  afterAll(() => new Promise((r) => answering.close(r)));

  it('refuses a private test endpoint when it is set, unless OUTBOUND_ALLOW_PRIVATE is on', async () => {
    for (const url of ['http://127.0.0.1:5432/', 'http://localhost:5432/', 'http://10.0.0.7/hook', 'http://[::ffff:127.0.0.1]:5432/'])
      await expect(policyFor('test', none).checkDestination(url)).rejects.toMatchObject({ code: 'destination_not_allowed' });
    await expect(policyFor('test', dev).checkDestination('http://127.0.0.1:5432/')).resolves.toBeInstanceOf(URL);
    // Link-local (cloud metadata) stays refused even then.
    await expect(policyFor('test', dev).checkDestination('http://169.254.169.254/latest')).rejects.toThrow('destination not allowed');
  });

  it('live endpoints want https, allow-listed hosts are exempt from the address check only', () => {
    expect(() => policyFor('live', none).checkUrl('http://hooks.example.com/x')).toThrow('destination not allowed');
    const allowed = { allowedHosts: new Set(['127.0.0.1']) };
    expect(policyFor('live', allowed).checkUrl('https://127.0.0.1/x').hostname).toBe('127.0.0.1');
    expect(() => policyFor('live', allowed).checkUrl('http://127.0.0.1/x')).toThrow('destination not allowed');
  });

  it('logs a refused delivery with the same words whether a server answers there or the port is closed', async () => {
    const sender = new HttpSender(none);
    try {
      const send = (url: string) => sender.send({ url, environment: 'test', body: '{}', headers: {}, timeoutMs: 2000 });
      const [a, b] = [await send(answeringUrl), await send(closedUrl)];
      for (const r of [a, b])
        expect(r).toMatchObject({ ok: false, status_code: null, error: 'destination not allowed', outcome: 'blocked' });
      expect(hits).toBe(0);
      // A host name that resolves to loopback is refused at connect time, with the same words.
      const byName = await send(answeringUrl.replace('127.0.0.1', 'localhost'));
      expect(byName).toMatchObject({ error: 'destination not allowed', outcome: 'blocked' });
      expect(hits).toBe(0);
      // The attempt log keeps no answer of a refused attempt: the inspector shows nothing of what is there.
      for (const r of [a, b, byName]) expect(r.response).toBeUndefined();
    } finally {
      sender.close();
    }
  });

  it('reaches a private endpoint with OUTBOUND_ALLOW_PRIVATE on (local development)', async () => {
    const sender = new HttpSender(dev);
    try {
      const r = await sender.send({ url: answeringUrl, environment: 'test', body: '{}', headers: {}, timeoutMs: 2000 });
      expect(r).toMatchObject({ status_code: 404, outcome: 'http_error' });
    } finally {
      sender.close();
    }
  });
});
