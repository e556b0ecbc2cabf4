import type { Logger } from '@tes/logger';
import { windowOf } from '../domain/rate-window.js';
import type { IdempotencyRepository } from '../store/idempotency.repository.js';
import type { RateLimitRepository } from '../store/rate-limit.repository.js';

/**
 * Deletes what has expired, in code (FerretDB does not enforce TTL indexes):
 * idempotency records past their 24 h and rate-limit tickets of windows that ended
 * more than two minutes ago (a margin for clock skew between replicas). Every
 * replica may run it: deletes of dead documents are idempotent.
 */
export function startSweeper(deps: {
  keys: IdempotencyRepository;
  rateLimits: RateLimitRepository;
  logger: Logger;
  intervalMs: number;
}): () => void {
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const now = Date.now();
      const keys = await deps.keys.sweep(new Date(now));
      const tickets = await deps.rateLimits.sweep(windowOf(now) - 2);
      if (keys + tickets > 0) deps.logger.debug('swept', { idempotency_keys: keys, rate_tickets: tickets });
    } catch (err) {
      deps.logger.warn('sweep failed', { error: String(err) });
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void sweep(), deps.intervalMs);
  timer.unref();
  void sweep();
  return () => clearInterval(timer);
}
