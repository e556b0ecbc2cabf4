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
