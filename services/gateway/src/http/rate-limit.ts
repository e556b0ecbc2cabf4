import type { RequestHandler } from 'express';
import { AppError } from '@tes/errors';
import type { RateLimitRepository } from '../store/rate-limit.repository.js';
import { requestsPerMinute } from '../domain/rate-window.js';
import { authOf } from './auth.js';

/**
 * Spec 8.2, per account across all its keys and every gateway replica. Every
 * authenticated answer carries X-RateLimit-Limit/-Remaining/-Reset; over the limit
 * the answer is 429 rate_limit_exceeded with Retry-After (seconds).
 */
export function rateLimit(limiter: RateLimitRepository): RequestHandler {
  return async (_req, res, next) => {
    const { account } = authOf(res);
    const d = await limiter.acquire(account._id, requestsPerMinute(account));
    res.setHeader('X-RateLimit-Limit', String(d.limit));
    res.setHeader('X-RateLimit-Remaining', String(d.remaining));
    res.setHeader('X-RateLimit-Reset', String(d.reset));
    if (!d.admitted) {
      throw new AppError('rate_limit_exceeded', `Rate limit of ${d.limit} requests per minute exceeded; retry after ${d.retryAfter} s`, {
        headers: { 'Retry-After': String(d.retryAfter) },
      });
    }
    next();
  };
}
