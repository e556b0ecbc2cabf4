import type { WebhookEvent } from '../types.js';
import { WebhookVerificationError, parseWebhook, type ParseWebhookOptions } from './verify.js';

/**
 * What the middleware needs of a request: the part of node's IncomingMessage it reads (express's
 * Request is one), plus the fields it may find or set. Written by shape, with no node or express
 * types, so any connect-style framework fits and the SDK's types need no @types/node.
 */
export interface WebhookRequest {
  headers: Record<string, string | string[] | undefined>;
  method?: string | undefined;
  url?: string | undefined;
  /** True once the body stream was consumed (by a body parser mounted before). */
  readableEnded?: boolean;
  on(event: 'data', listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  body?: unknown;
  /** A raw body kept by an earlier parser (`express.json({ verify })` pattern); used if present. */
  rawBody?: unknown;
  /** Set by the middleware: the verified, parsed event. */
  webhookEvent?: WebhookEvent;
  /** Set by the middleware: the `webhook-id` header, the same on every attempt (dedup key). */
  webhookId?: string;
}

export interface WebhookResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

export type NextFunctionLike = (err?: unknown) => void;

export interface WebhookRejection {
  status: number;
  code: string;
  message: string;
}

export interface WebhookMiddlewareOptions extends ParseWebhookOptions {
  /** Larger bodies get 413. Default 1 MiB. */
  limitBytes?: number;
  /** Sees every request the middleware answers itself (400/401/413), e.g. to log it. */
  onRejected?: (rejection: WebhookRejection, req: WebhookRequest) => void;
}

declare global {
  // Lets `req.webhookEvent` type-check in express handlers (harmless without express).
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      webhookEvent?: WebhookEvent;
      webhookId?: string;
    }
  }
}

const STATUS: Record<WebhookVerificationError['code'], number> = {
  missing_signature: 401,
  invalid_signature: 401,
  stale_timestamp: 401,
  invalid_payload: 400,
};

class BodyTooLarge extends Error {}

/**
 * Express-compatible middleware (also plain `http.createServer`): reads the RAW body itself,
 * verifies it (Standard Webhooks by default, see {@link ParseWebhookOptions.scheme}), then sets
 * `req.webhookEvent` and `req.webhookId` and calls `next()`. Answers 401 (missing, wrong or
 * stale signature), 400 (not an event) or 413 itself, with `{"error":{"code","message"}}`.
 *
 * Mount it before any JSON body parser on its route. If a parser already consumed the body
 * it uses a Buffer/string left in `req.body` (`express.raw()`/`express.text()`) or
 * `req.rawBody`; a parsed object is never re-serialized (it would not verify): that is a
 * wiring error passed to `next(err)`.
 */
export function webhookMiddleware(options: WebhookMiddlewareOptions = {}) {
  const limit = options.limitBytes ?? 1024 * 1024;
  const reject = (req: WebhookRequest, res: WebhookResponse, r: WebhookRejection): void => {
    options.onRejected?.(r, req);
    res.statusCode = r.status;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ error: { code: r.code, message: r.message } }));
  };
  return (req: WebhookRequest, res: WebhookResponse, next: NextFunctionLike): void => {
    rawBodyOf(req, limit).then(
      (raw) => {
        let event: WebhookEvent;
        try {
          event = parseWebhook(raw, req.headers, options);
        } catch (err) {
          if (err instanceof WebhookVerificationError)
            return reject(req, res, { status: STATUS[err.code], code: err.code, message: err.message });
          return next(err);
        }
        req.webhookEvent = event;
        const id = req.headers['webhook-id'];
        if (typeof id === 'string') req.webhookId = id;
        if (req.rawBody === undefined) req.rawBody = raw;
        next();
      },
      (err: unknown) => {
        if (err instanceof BodyTooLarge) {
          res.setHeader('Connection', 'close');
          return reject(req, res, { status: 413, code: 'payload_too_large', message: `the body is larger than ${limit} bytes` });
        }
        next(err);
      },
    );
  };
}

function rawBodyOf(req: WebhookRequest, limit: number): Promise<Buffer> {
  for (const v of [req.rawBody, req.body]) {
    if (Buffer.isBuffer(v)) return Promise.resolve(v);
    if (typeof v === 'string') return Promise.resolve(Buffer.from(v, 'utf8'));
  }
  if (req.readableEnded) {
    return Promise.reject(
      new Error(
        'webhookMiddleware: the request body was already read by another middleware (express.json()?) and only a parsed ' +
          'object is left, which cannot be verified. Mount webhookMiddleware before body parsers, or use ' +
          "express.raw({ type: 'application/json' }) on the webhook route.",
      ),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Uint8Array | string) => {
      if (done) return;
      const b = typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
      size += b.length;
      if (size > limit) {
        done = true;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(b);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
  });
}
