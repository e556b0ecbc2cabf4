import http from 'node:http';
import https from 'node:https';

/** One HTTP exchange, as the client needs it: the whole body is read before it returns. */
export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface HttpResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  text: string;
}

export interface Transport {
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Releases pooled connections (the client's `close()`). */
  close(): void;
}

/** The global `fetch` (Node 20+) or one you pass (for example one bound to an undici dispatcher). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<{
  status: number;
  headers: { forEach(cb: (value: string, key: string) => void): void };
  text(): Promise<string>;
}>;

export function fetchTransport(fetchImpl: FetchLike = globalThis.fetch): Transport {
  return {
    async send(req) {
      const res = await fetchImpl(req.url, {
        method: req.method,
        headers: req.headers,
        ...(req.body === undefined ? {} : { body: req.body }),
        signal: req.signal,
      });
      const headers: Record<string, string> = {};
      res.headers.forEach((value, key) => (headers[key.toLowerCase()] = value));
      return { status: res.status, headers, text: await res.text() };
    },
    close() {},
  };
}

/**
 * A node:http(s) `Agent`, typed by the one method the SDK calls so that its published types need
 * no @types/node.
 */
export interface HttpAgentLike {
  destroy(): void;
}

/** PEM certificate(s): strings, or bytes (a Buffer is a Uint8Array). */
export type CaCertificates = string | Uint8Array | Array<string | Uint8Array>;

export interface NodeTransportOptions {
  /** A node:http(s) Agent used for every request instead of the transport's own keep-alive agent. */
  agent?: HttpAgentLike | undefined;
  /** Extra trusted CA certificate(s) in PEM, for example a development certificate. */
  ca?: CaCertificates | undefined;
  /** false accepts any certificate (development only). */
  rejectUnauthorized?: boolean | undefined;
}

/**
 * node:http/node:https, used when TLS needs settings the global fetch cannot take without
 * undici: a custom agent, an extra CA, or accepting a self-signed development certificate.
 */
export function nodeTransport(options: NodeTransportOptions = {}): Transport {
  const own = options.agent
    ? undefined
    : {
        http: new http.Agent({ keepAlive: true }),
        https: new https.Agent({
          keepAlive: true,
          ...(options.ca === undefined ? {} : { ca: pem(options.ca) }),
          ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized }),
        }),
      };
  return {
    send(req) {
      const url = new URL(req.url);
      const lib = url.protocol === 'https:' ? https : http;
      // an Agent by contract (see HttpAgentLike)
      const agent = (options.agent as http.Agent | undefined) ?? (url.protocol === 'https:' ? own?.https : own?.http);
      const headers = { ...req.headers };
      if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
      return new Promise<HttpResponse>((resolve, reject) => {
        const r = lib.request(url, { method: req.method, headers, agent, signal: req.signal }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('close', () => {
            if (!res.complete) reject(new Error('the connection closed before the answer was complete'));
          });
          res.on('end', () => {
            const out: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
            resolve({ status: res.statusCode ?? 0, headers: out, text: Buffer.concat(chunks).toString('utf8') });
          });
        });
        r.on('error', reject);
        r.end(req.body);
      });
    },
    close() {
      own?.http.destroy();
      own?.https.destroy();
    },
  };
}

function pem(ca: CaCertificates): string | Buffer | Array<string | Buffer> {
  const one = (c: string | Uint8Array) => (typeof c === 'string' ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return Array.isArray(ca) ? ca.map(one) : one(ca);
}
