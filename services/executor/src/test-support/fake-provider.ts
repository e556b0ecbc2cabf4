import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Core of the fake provider servers the executor's tests run against: real HTTP on
 * loopback, bearer-token check, an `Idempotency-Key` replay cache for writes, and a
 * queue of faults each provider renders in its own wire format.
 */
export type Fault =
  | { kind: 'unavailable'; status?: number }
  | { kind: 'rate_limited'; retryAfter?: number }
  | { kind: 'unauthorized' }
  | { kind: 'insufficient_scope' }
  | { kind: 'client_rejected' };

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  token: string | undefined;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface FakeProvider {
  url: string;
  /** Every request received, faults included. */
  requests: FakeRequest[];
  /** Tokens the fake accepts; any other bearer token is answered 401. */
  tokens: Set<string>;
  /** The next `times` requests (optionally only those whose path matches) get this fault. */
  fail(fault: Fault, times?: number, pathPattern?: RegExp): void;
  close(): Promise<void>;
}

export interface ProviderBehaviour {
  /** The provider's answer to a fault, in its wire format. */
  fault(f: Fault): Reply;
  route(req: FakeRequest): Reply | Promise<Reply>;
}

export async function startFakeProvider(behaviour: ProviderBehaviour, tokens: Iterable<string> = ['tok-valid']): Promise<FakeProvider> {
  const requests: FakeRequest[] = [];
  const faults: { fault: Fault; left: number; path?: RegExp | undefined }[] = [];
  const replayed = new Map<string, Reply>();
  const valid = new Set(tokens);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const u = new URL(req.url ?? '/', 'http://fake');
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown = raw;
        try {
          body = raw ? (JSON.parse(raw) as unknown) : undefined;
        } catch {
          /* not JSON */
        }
        const auth = req.headers.authorization;
        const fr: FakeRequest = {
          method: req.method ?? 'GET',
          path: u.pathname,
          query: u.searchParams,
          headers: req.headers,
          body,
          token: auth?.startsWith('Bearer ') ? auth.slice(7) : undefined,
        };
        requests.push(fr);
        let reply: Reply;
        const fi = faults.findIndex((f) => f.left > 0 && (!f.path || f.path.test(fr.path)));
        const pending = fi >= 0 ? faults[fi] : undefined;
        if (pending) {
          pending.left -= 1;
          reply = behaviour.fault(pending.fault);
        } else if (!fr.token || !valid.has(fr.token)) {
          reply = behaviour.fault({ kind: 'unauthorized' });
        } else {
          const key = req.headers['idempotency-key'] as string | undefined;
          const cacheKey = key ? `${fr.method} ${fr.path} ${key}` : undefined;
          const seen = cacheKey ? replayed.get(cacheKey) : undefined;
          reply = seen ?? (await behaviour.route(fr));
          if (cacheKey && !seen && reply.status < 300) replayed.set(cacheKey, reply);
        }
        res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...(reply.headers ?? {}) });
        res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      })().catch((err: unknown) => {
        res.writeHead(500).end(String(err));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tokens: valid,
    fail(fault, times = 1, path) {
      faults.push({ fault, left: times, path });
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function notFound(message = 'Not Found'): Reply {
  return { status: 404, body: { message } };
}
