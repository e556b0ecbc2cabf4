import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, isAppError, toEnvelope } from '@tes/errors';
import type { Logger } from '@tes/logger';
import { isDatabaseUnavailable } from '@tes/errors';

/** body-parser failures carry a `type`; map them to the spec's envelope. */
function fromBodyParser(err: { type?: string; limit?: unknown }): AppError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('invalid_request', 'Request body is not valid JSON');
    case 'entity.too.large':
      return new AppError('request_too_large', `Request body exceeds ${typeof err.limit === 'number' ? err.limit : 'the limit of'} bytes`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('invalid_request', 'Request body encoding is not supported; send UTF-8 JSON');
    case 'request.aborted':
    case 'stream.encoding.set':
    case 'request.size.invalid':
      return new AppError('invalid_request', 'Request body could not be read');
    default:
      return undefined;
  }
}

/**
 * Errors raised by express itself carry a 4xx status (a bad %-escape in a path parameter, a
 * body that does not match its Content-Encoding): the client's fault, never a 500.
 */
function fromClientStatus(err: { status?: unknown; statusCode?: unknown }): AppError | undefined {
  const status = typeof err.status === 'number' ? err.status : typeof err.statusCode === 'number' ? err.statusCode : undefined;
  if (status === undefined || status < 400 || status > 499) return undefined;
  if (status === 413) return new AppError('request_too_large', 'Request body is too large');
  return new AppError('invalid_request', 'The request could not be understood (malformed path, header or body encoding)');
}

/**
 * A socket to a dependency that broke mid-request. The MongoDB driver does not always wrap it: a
 * write on a connection the server has just closed surfaces as Node's own EPIPE error (seen in the
 * chaos suite while the MongoDB-wire server restarted). A service's sockets all lead to its own
 * dependencies (database, broker, vault), never to the client, whose socket errors reach no handler.
 */
const SOCKET_BROKEN = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'ENOTCONN']);

/**
 * Whether `err`, or the error it wraps, is a dependency out of reach. The driver wraps a connection
 * lost during an insertMany in a MongoBulkWriteError that keeps the network error as its
 * `errorResponse` (seen in the chaos suite: the gateway's rate tickets while the database restarted).
 */
function isUnavailable(err: unknown, depth = 0): boolean {
  const { code, errorResponse, cause } = (err ?? {}) as { code?: unknown; errorResponse?: unknown; cause?: unknown };
  if (isDatabaseUnavailable(err) || (typeof code === 'string' && SOCKET_BROKEN.has(code))) return true;
  return depth < 3 && [errorResponse, cause].some((inner) => inner instanceof Error && isUnavailable(inner, depth + 1));
}

/** Our own database being unreachable is temporary: 503 with Retry-After, not 500. */
function fromUnavailableDependency(err: unknown): AppError | undefined {
  if (!isUnavailable(err)) return undefined;
  return new AppError('temporarily_unavailable', 'The service is temporarily unavailable; retry shortly', {
    headers: { 'Retry-After': '1' },
  });
}

/** The one mapping from errors to HTTP: AppError → its status, anything else → 500 internal_error. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = (err ?? {}) as { type?: string; status?: unknown; statusCode?: unknown };
    const known = isAppError(err) ? err : (fromBodyParser(e) ?? fromClientStatus(e) ?? fromUnavailableDependency(err));
    if (known?.code === 'temporarily_unavailable')
      logger.warn('dependency unavailable', { request_id: res.locals['requestId'], error: String(err) });
    const appErr = known ?? new AppError('internal_error', 'An internal error occurred; retry with exponential backoff');
    if (!known)
      logger.error('unhandled error', {
        request_id: res.locals['requestId'],
        path: req.path,
        error: err instanceof Error ? err : String(err),
      });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(appErr.headers)) res.setHeader(k, v);
    res.status(appErr.status).json(toEnvelope(appErr));
  };
}

/** Last handler: unknown route. */
export function notFound(): RequestHandler {
  return (req, _res, next) => next(new AppError('not_found', `No route ${req.method} ${req.path}`));
}

/** Mounts handlers on one path and answers 405 with Allow for other methods. */
export function methods(
  handlers: Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', RequestHandler | RequestHandler[]>>,
): RequestHandler {
  const allowed = Object.keys(handlers).map((m) => m.toUpperCase());
  if (allowed.includes('GET')) allowed.push('HEAD');
  return (req, res, next) => {
    const method = (req.method === 'HEAD' ? 'get' : req.method.toLowerCase()) as keyof typeof handlers;
    const h = handlers[method];
    if (!h) {
      res.setHeader('Allow', allowed.join(', '));
      next(new AppError('method_not_allowed', `Method ${req.method} is not allowed on ${req.path}; allowed: ${allowed.join(', ')}`));
      return;
    }
    const chain = Array.isArray(h) ? h : [h];
    let i = 0;
    const step = (err?: unknown): void => {
      if (err) return next(err);
      const fn = chain[i++];
      if (!fn) return next();
      Promise.resolve(fn(req, res, step)).catch(next);
    };
    step();
  };
}
