import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@tes/logger';

export interface RequestLogOptions {
  /** The account the request was authenticated as, once known (read when the answer is sent). */
  accountId?: (res: Response) => string | undefined;
}

/** Long enough for every real path; a crafted multi-kilobyte URL is not copied into the logs. */
const MAX_PATH = 256;

/**
 * One info line per request when its answer has been sent (or the client went away first):
 * method, path (never the query string), status, duration_ms, request_id and account_id when
 * known. No header is read, so neither the Authorization header nor the key can reach it.
 * Mount after requestId().
 */
export function requestLog(logger: Logger, options: RequestLogOptions = {}) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    let logged = false;
    const done = (): void => {
      if (logged) return;
      logged = true;
      const accountId = options.accountId?.(res);
      logger.info('request finished', {
        method: req.method,
        path: (req.originalUrl.split('?', 1)[0] ?? '').slice(0, MAX_PATH),
        status: res.statusCode,
        duration_ms: Math.round(performance.now() - started),
        request_id: res.locals['requestId'],
        ...(accountId ? { account_id: accountId } : {}),
        ...(res.writableFinished ? {} : { aborted: true }),
      });
    };
    res.once('finish', done);
    res.once('close', done);
    next();
  };
}
