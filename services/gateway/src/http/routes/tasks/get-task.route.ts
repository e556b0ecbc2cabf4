import type { RequestHandler } from 'express';
import { AppError } from '@tes/errors';
import type { Broker } from '@tes/messaging';
import type { TaskViewRepository } from '../../../store/task-view.repository.js';
import { authOf } from '../../auth.js';
import { taskIdParam } from './task-id.js';
import { renderTask } from '../../render.js';
import { upstreamOf } from '../../upstream.js';
import { currentWaiting } from '../../waiting.js';

/**
 * GET /v1/tasks/:task_id. Another environment's task is 404, like an unknown one. A waiting
 * task carries `waiting` (task.waiting's data) with a freshly issued consent link.
 */
export function getTaskRoute(deps: { broker: Broker; views: TaskViewRepository; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const { account, environment } = authOf(res);
    const id = taskIdParam(req);
    const view = await deps.views.get(id, account._id, environment);
    if (!view) throw new AppError('task_not_found', `No task ${id}`);
    res.json(renderTask(view, await currentWaiting(view, upstreamOf(deps, res))));
  };
}
