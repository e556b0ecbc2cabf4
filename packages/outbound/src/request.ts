import http from 'node:http';
import https from 'node:https';
import type { OutboundPolicy } from './policy.js';

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface OutboundInit {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Longest body read; a longer one fails the request. Default 1 MiB. */
  maxBytes?: number;
}

export class OutboundTimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * One request under the policy: the URL checked, the connection's addresses checked in its
 * lookup, redirects never followed (a 3xx is returned as is), the whole exchange bounded by
 * `timeoutMs` and the body by `maxBytes`. Rejects with OutboundRefusedError, OutboundTimeoutError
 * or the socket's error.
 */
export async function outboundRequest(raw: string, init: OutboundInit, policy: OutboundPolicy): Promise<OutboundResponse> {
  const url = policy.checkUrl(raw);
  const maxBytes = init.maxBytes ?? 1024 * 1024;
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<OutboundResponse>((resolve, reject) => {
    const body = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
    const req = transport.request(url, {
      method: init.method,
      agent: false,
      lookup: policy.lookup,
      headers: { ...init.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
    });
    const timer = setTimeout(() => req.destroy(new OutboundTimeoutError(init.timeoutMs)), init.timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes) req.destroy(new Error(`the response is larger than ${maxBytes} bytes`));
        else chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.end(body);
  });
}

const agents = new WeakMap<OutboundPolicy, { http: http.Agent; https: https.Agent }>();

/** Keep-alive-less agents whose every connection passes the policy's lookup (axios, got: httpAgent/httpsAgent). */
export function outboundAgents(policy: OutboundPolicy): { http: http.Agent; https: https.Agent } {
  let a = agents.get(policy);
  if (!a) {
    a = { http: new http.Agent({ lookup: policy.lookup }), https: new https.Agent({ lookup: policy.lookup }) };
    agents.set(policy, a);
  }
  return a;
}
