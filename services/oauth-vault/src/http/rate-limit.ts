import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { addressKey, clientAddressOf } from '@tes/http';
import type { VaultSettings } from '../domain/deps.js';
import { messagePage } from './pages.js';

const WINDOW_MS = 60_000;
export const DEFAULT_PUBLIC_RATE_LIMIT = 60;

/**
 * The public pages' rate limit (express-rate-limit, in-memory, per vault replica): at most
 * `publicRateLimitPerMinute` requests per client address (an IPv4 address or an IPv6 /64) per
 * minute, then a 429 page with Retry-After, before any route runs (so nothing is stored). The
 * address is the socket's, or X-Forwarded-For from one of `trustedProxies`. 0 turns it off.
 */
export function publicRateLimit(settings: Pick<VaultSettings, 'publicRateLimitPerMinute' | 'trustedProxies'>): RequestHandler {
  const limit = settings.publicRateLimitPerMinute ?? DEFAULT_PUBLIC_RATE_LIMIT;
  if (limit === 0) return (_req, _res, next) => next();
  const clientAddress = clientAddressOf(settings.trustedProxies ?? []);
  return rateLimit({
    windowMs: WINDOW_MS,
    limit,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (req) => addressKey(clientAddress(req)),
    // The key is ours (trusted proxies, IPv6 /64), not express's req.ip: its checks of req.ip do not apply.
    validate: { trustProxy: false, xForwardedForHeader: false, ip: false, keyGeneratorIpFallback: false },
    handler: (req, res) => {
      const reset = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const waitS = Math.max(1, Math.ceil(((reset?.getTime() ?? Date.now() + WINDOW_MS) - Date.now()) / 1000));
      res.setHeader('Retry-After', String(waitS));
      res
        .status(429)
        .type('html')
        .send(
          messagePage('warn', 'Too many requests', [
            `Too many requests came from your network to these pages. Wait ${waitS} seconds, then open the link again.`,
          ]),
        );
    },
  });
}
