import type { RequestHandler } from 'express';
import { TASK_STATUSES, type Environment, type TaskStatus } from '@tes/contracts';
import type { DashboardDeps } from '../deps.js';
import { DashError } from '../errors.js';
import { href } from '../layout.js';
import { taskPage, tasksPage, type TaskFilters } from '../pages/tasks.page.js';
import { ctxOf, paramField, queryField, redirect, scopeOf, send } from '../request.js';

const TASK_ID = /^task_[A-Za-z0-9]{1,64}$/;

/** GET /dashboard/tasks: the environment's tasks, newest first, filtered by status and user. */
export function tasksRoute(deps: Pick<DashboardDeps, 'views'>): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const problems: string[] = [];
    const status = queryField(req, 'status');
    const userId = queryField(req, 'user_id').trim();
    const limitText = queryField(req, 'limit');
    const offsetText = queryField(req, 'offset');
    const limit = limitText === '' ? 20 : Number(limitText);
    const offset = offsetText === '' ? 0 : Number(offsetText);
    if (status !== '' && !(TASK_STATUSES as readonly string[]).includes(status))
      problems.push(`status must be one of: ${TASK_STATUSES.join(', ')}`);
    if (userId.length > 256) problems.push('user_id must have at most 256 characters');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) problems.push('the page size must be from 1 to 100');
    if (!Number.isInteger(offset) || offset < 0 || offset > 1_000_000) problems.push('offset must be 0 or more');
    const filters: TaskFilters = {
      status: problems.length ? '' : status,
      user_id: problems.length ? '' : userId,
      limit: Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : 20,
      offset: problems.length ? 0 : offset,
    };
    if (problems.length) {
      return send(
        res,
        tasksPage(ctx, {
          filters,
          rows: [],
          hasMore: false,
          flash: { kind: 'err', title: 'These filters are not valid:', text: ` ${problems.join('; ')}.` },
        }),
        400,
      );
    }
    const rows = await deps.views.list(
      {
        ...scopeOf(ctx),
        ...(filters.status ? { status: filters.status as TaskStatus } : {}),
        ...(filters.user_id ? { user_id: filters.user_id } : {}),
      },
      filters.limit + 1,
      filters.offset,
    );
    send(res, tasksPage(ctx, { filters, rows: rows.slice(0, filters.limit), hasMore: rows.length > filters.limit }));
  };
}

/**
 * GET /dashboard/tasks/:task_id: the task with its prompt and plan (step inputs, masked), where
 * it stands, its trace, its webhook deliveries and what it waits for. A task of the other environment redirects there; a back end that does not answer
 * leaves its part out.
 */
export function taskRoute(deps: Pick<DashboardDeps, 'views' | 'upstream'>): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const id = paramField(req, 'task_id');
    const notFound = new DashError(404, 'Task not found', `There is no ${ctx.env} task ${id.slice(0, 80)} in this account.`);
    if (!TASK_ID.test(id)) throw notFound;
    const task = await deps.views.get(id, ctx.account._id, ctx.env);
    if (!task) {
      const other: Environment = ctx.env === 'test' ? 'live' : 'test';
      if (await deps.views.get(id, ctx.account._id, other)) return redirect(res, href(`/tasks/${id}`, { env: other }));
      throw notFound;
    }
    const scope = scopeOf(ctx);
    const [trace, deliveries, waiting, inspection] = await Promise.allSettled([
      deps.upstream.trace(scope, id),
      deps.upstream.webhookDeliveries(scope, { taskId: id, limit: 50 }),
      deps.upstream.waiting(task),
      deps.upstream.inspect(scope, id),
    ]);
    const traceValue = trace.status === 'fulfilled' ? trace.value : null;
    const traceError = traceValue
      ? undefined
      : 'The trace could not be read right now (the executor did not answer). Refresh to try again.';
    const log = deliveries.status === 'fulfilled' ? deliveries.value : null;
    const w = waiting.status === 'fulfilled' ? waiting.value : undefined;
    const ins = inspection.status === 'fulfilled' ? inspection.value : null;
    send(
      res,
      taskPage(ctx, {
        task,
        trace: traceValue,
        ...(traceError ? { traceError } : {}),
        deliveries: log,
        ...(w ? { waiting: w } : {}),
        inspection: ins,
      }),
    );
  };
}
