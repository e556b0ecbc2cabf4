import type { RequestHandler } from 'express';
import { AppError } from '@tes/errors';
import type { CreateBacklog } from '../domain/create-backlog.js';
import { authOf } from './auth.js';

/**
 * Before the rate limit: a create refused because its account's creates are queueing (see
 * CreateBacklog) costs no database write and none of the account's requests per minute.
 */
export function shedWhenBacklogged(backlog: CreateBacklog, onShed: () => void = () => undefined): RequestHandler {
  return (_req, res, next) => {
    if (backlog.isBacklogged(authOf(res).account._id)) {
      onShed();
      throw new AppError('temporarily_unavailable', 'Tasks are being created faster than they can be accepted; retry after 1 s', {
        headers: { 'Retry-After': '1' },
      });
    }
    next();
  };
}
