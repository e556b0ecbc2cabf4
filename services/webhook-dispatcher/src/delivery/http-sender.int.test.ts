import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpSender } from './http-sender.js';

/**
 * Many endpoints behind one host (one receiver for many accounts) share one agent: a burst
 * opens as many connections as deliveries in flight, and the next burst must find them kept.
 */
describe('HttpSender connection reuse', () => {
  let server: http.Server;
  let url: string;
  let connections = 0;
  /** Answers are held until this many requests are in flight, so every burst needs that many connections. */
  let holdUntil = 0;
  let held: http.ServerResponse[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        held.push(res);
        if (held.length < holdUntil) return;
        for (const r of held) r.writeHead(200).end('ok');
        held = [];
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const burst = (sender: HttpSender, n: number) =>
    Promise.all(Array.from({ length: n }, () => sender.send({ url, environment: 'test', body: '{}', headers: {}, timeoutMs: 5000 })));

  it('keeps every connection of a burst for the next one, up to maxFreeSockets', async () => {
    const sender = new HttpSender({ allowedHosts: new Set(), allowPrivate: true }, 100);
    try {
      holdUntil = 100;
      connections = 0;
      expect((await burst(sender, 100)).every((r) => r.ok)).toBe(true);
      expect(connections).toBe(100);
      expect((await burst(sender, 100)).every((r) => r.ok)).toBe(true);
      expect(connections).toBe(100);
    } finally {
      sender.close();
    }
  });

  it('closes what is beyond maxFreeSockets, and the next burst opens that many again', async () => {
    const sender = new HttpSender({ allowedHosts: new Set(), allowPrivate: true }, 64);
    try {
      holdUntil = 100;
      connections = 0;
      await burst(sender, 100);
      await burst(sender, 100);
      expect(connections).toBe(136);
    } finally {
      sender.close();
    }
  });
});

/** What an attempt keeps of the exchange: the headers sent, and the start of the answer without waiting on it for long. */
describe('HttpSender: the request and the answer it reports', () => {
  let server: http.Server;
  let base = '';
  /** How the receiver answers, by path. */
  const answers: Record<string, (res: http.ServerResponse) => void> = {
    '/stall': (res) => {
      // The status and a first chunk, then nothing: the body never ends.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    },
    '/cut': (res) => {
      res.writeHead(500, { 'content-type': 'text/plain', 'content-length': '100' });
      res.write('half');
      setTimeout(() => res.socket?.destroy(), 50);
    },
  };

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => answers[req.url ?? '']?.(res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('reports the headers it sent, and a body that does not end as truncated, after a short wait that does not change the outcome', async () => {
    const sender = new HttpSender({ allowedHosts: new Set(), allowPrivate: true });
    try {
      const started = Date.now();
      const r = await sender.send({
        url: `${base}/stall`,
        environment: 'test',
        body: '{"a":1}',
        headers: { 'webhook-id': 'evt_x' },
        timeoutMs: 20_000,
      });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r).toMatchObject({ ok: true, status_code: 200, error: null });
      expect(r.response).toEqual({ body: 'partial', truncated: true, content_type: 'text/plain' });
      expect(r.request_headers).toEqual({
        'webhook-id': 'evt_x',
        'content-type': 'application/json',
        'content-length': '7',
        'user-agent': 'tes-webhook-dispatcher/0.1',
      });
      // Latency is up to the status line, not the wait for the body.
      expect(r.latency_ms).toBeLessThan(1500);
    } finally {
      sender.close();
    }
  });

  it('keeps the status when the connection is cut in the middle of the body', async () => {
    const sender = new HttpSender({ allowedHosts: new Set(), allowPrivate: true });
    try {
      const r = await sender.send({ url: `${base}/cut`, environment: 'test', body: '{}', headers: {}, timeoutMs: 5000 });
      expect(r).toMatchObject({ ok: false, status_code: 500, error: 'HTTP 500', outcome: 'http_error' });
      expect(r.response).toEqual({ body: 'half', truncated: true, content_type: 'text/plain' });
    } finally {
      sender.close();
    }
  });
});
