import http from 'node:http';
import https from 'node:https';
import type { Environment } from '@tes/contracts';
import { checkUrl, guardedLookup, UnsafeDestinationError, type GuardOptions } from '../domain/ssrf-guard.js';

export interface SendRequest {
  url: string;
  environment: Environment;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface SendResult {
  /** Exactly HTTP 200 within the timeout. */
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

const USER_AGENT = 'tes-webhook-dispatcher/0.1';

/**
 * One POST, with node's http: no redirect is ever followed (a 3xx is a failure like any
 * non-200), no connection is reused (each request resolves the host again through the
 * guard), and the whole exchange up to the response status is bounded by `timeoutMs`.
 */
export class HttpSender {
  constructor(private readonly guard: GuardOptions) {}

  async send(req: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = checkUrl(req.url, req.environment, this.guard);
    } catch (err) {
      return { ok: false, status_code: null, latency_ms: elapsed(), error: describe(err, req.timeoutMs) };
    }
    const transport = url.protocol === 'https:' ? https : http;
    const body = Buffer.from(req.body, 'utf8');

    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (result: Omit<SendResult, 'latency_ms'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, latency_ms: elapsed() });
      };
      const request = transport.request(url, {
        method: 'POST',
        agent: false,
        lookup: guardedLookup(req.environment, this.guard),
        headers: {
          ...req.headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': USER_AGENT,
          connection: 'close',
        },
      });
      const timer = setTimeout(() => request.destroy(new TimeoutError(req.timeoutMs)), req.timeoutMs);
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        finish({
          ok: status === 200,
          status_code: status,
          error: status === 200 ? null : status >= 300 && status < 400 ? `redirect ${status} not followed` : `HTTP ${status}`,
        });
        // The answer is decided; drain the body, and give up on it if it never ends.
        res.resume();
        const drain = setTimeout(() => res.destroy(), req.timeoutMs);
        drain.unref();
        res.on('close', () => clearTimeout(drain));
        res.on('error', () => undefined);
      });
      request.on('error', (err) => finish({ ok: false, status_code: null, error: describe(err, req.timeoutMs) }));
      request.end(body);
    });
  }
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** A short, secret-free reason for the attempt log. */
function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof TimeoutError) return `timeout: no answer within ${timeoutMs} ms`;
  if (err instanceof UnsafeDestinationError) return `refused by the destination guard: ${err.message}`;
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection closed by the receiver';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${e.code})`;
    case 'ETIMEDOUT':
      return 'connect timeout';
    default:
      if (e.message === 'socket hang up') return 'connection closed by the receiver';
      return e.code ? `${e.code}: ${e.message}` : e.message;
  }
}
