import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every answer carries X-Request-Id: the caller's (when sane) or a new one. */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.get('x-request-id');
    const id = given && VALID.test(given) ? given : `req_${randomUUID().replaceAll('-', '')}`;
    res.locals['requestId'] = id;
    res.setHeader('X-Request-Id', id);
    next();
  };
}

export function requestIdOf(res: Response): string {
  return String(res.locals['requestId'] ?? '');
}
