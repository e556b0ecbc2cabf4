import type { RequestHandler } from 'express';
import { listTasksQuerySchema, type ListTasksQuery } from '@tes/contracts';
import { validQuery } from '@tes/http';
import type { TaskViewRepository } from '../../../store/task-view.repository.js';
import { authOf } from '../../auth.js';
import { renderListItem } from '../../render.js';

/** GET /v1/tasks: newest first, `has_more` from fetching one extra row. */
export function listTasksRoute(views: TaskViewRepository): RequestHandler {
  return async (req, res) => {
    const q = validQuery<Required<Pick<ListTasksQuery, 'limit' | 'offset'>> & ListTasksQuery>(req, listTasksQuerySchema);
    const { account, environment } = authOf(res);
    const rows = await views.list(
      { account_id: account._id, environment, ...(q.status ? { status: q.status } : {}), ...(q.user_id ? { user_id: q.user_id } : {}) },
      q.limit + 1,
      q.offset,
    );
    res.json({ data: rows.slice(0, q.limit).map(renderListItem), has_more: rows.length > q.limit });
  };
}
