/**
 * A webhook receiver for the chaos suite that can really go away: `down()` closes the
 * listening socket and every connection (deliveries then get "connection refused"),
 * `up()` listens again on the same port. While up, it answers 200, except for a
 * configurable share of 500s and of answers slower than the dispatcher's timeout, so
 * that retries (and so duplicate deliveries of one webhook-id) happen all the time.
 * Every request that reached it is kept with its answer.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Hit {
  webhookId: string | undefined;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  receivedAt: number;
  /** The status it was answered with; 0 when the answer was late (the sender had given up). */
  answered: number;
}

export interface ChaosReceiver {
  url: string;
  port: number;
  hits: Hit[];
  /** Share (0..1) of requests answered 500, and of answers delayed by `slowMs`. */
  flaky(failShare: number, slowShare: number, slowMs: number): void;
  down(): Promise<void>;
  up(): Promise<void>;
  readonly isUp: boolean;
  close(): Promise<void>;
}

export async function startChaosReceiver(seed = 1): Promise<ChaosReceiver> {
  const hits: Hit[] = [];
  let failShare = 0;
  let slowShare = 0;
  let slowMs = 0;
  // A small deterministic generator, so a run's mix of answers depends on the seed only.
  let state = seed >>> 0 || 1;
  const rnd = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      const hit: Hit = {
        webhookId: Array.isArray(id) ? id[0] : id,
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        answered: 0,
      };
      hits.push(hit);
      const r = rnd();
      if (r < failShare) {
        hit.answered = 500;
        res.writeHead(500).end('chaos: fail');
      } else if (r < failShare + slowShare) {
        setTimeout(() => {
          if (!res.destroyed && !res.writableEnded) res.writeHead(200).end('late');
        }, slowMs);
      } else {
        hit.answered = 200;
        res.writeHead(200).end('ok');
      }
    });
  });
  server.keepAliveTimeout = 1000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  let isUp = true;
  const down = async () => {
    if (!isUp) return;
    isUp = false;
    await new Promise<void>((r) => {
      server.close(() => r());
      for (const s of sockets) s.destroy();
    });
  };
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    hits,
    flaky(f, s, ms) {
      failShare = f;
      slowShare = s;
      slowMs = ms;
    },
    down,
    async up() {
      if (isUp) return;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      isUp = true;
    },
    get isUp() {
      return isUp;
    },
    close: down,
  };
}
