import type { RequestHandler } from 'express';
import { concurrentTasks, requestsPerMinute, retryAfterSeconds } from '../../domain/rate-window.js';
import type { DashboardDeps } from '../deps.js';
import { usagePage } from '../pages/usage.page.js';
import { ctxOf, send } from '../request.js';

/** GET /dashboard/usage: this minute's requests and the running tasks against the plan's limits. */
export function usageRoute(deps: Pick<DashboardDeps, 'usage'>): RequestHandler {
  return async (_req, res) => {
    const ctx = ctxOf(res);
    const now = Date.now();
    const [requests, counts] = await Promise.all([
      deps.usage.requestsThisMinute(ctx.account._id, now),
      deps.usage.taskCounts(ctx.account._id, ['running', 'pending', 'waiting']),
    ]);
    send(
      res,
      usagePage(ctx, {
        plan: ctx.account.plan,
        requestsPerMinute: requestsPerMinute(ctx.account),
        requestsThisMinute: requests,
        resetsInS: retryAfterSeconds(now),
        concurrentLimit: concurrentTasks(ctx.account),
        running: counts['running'] ?? 0,
        pending: counts['pending'] ?? 0,
        waiting: counts['waiting'] ?? 0,
      }),
    );
  };
}
