import type { RequestHandler } from 'express';
import { AppError } from '@tes/errors';
import type { TaskViewRepository } from '../../../store/task-view.repository.js';
import { authOf } from '../../auth.js';
import { taskIdParam } from './task-id.js';
import { renderTask } from '../../render.js';

/** GET /v1/tasks/:task_id. Another environment's task is 404, like an unknown one. */
export function getTaskRoute(views: TaskViewRepository): RequestHandler {
  return async (req, res) => {
    const { account, environment } = authOf(res);
    const id = taskIdParam(req);
    const view = await views.get(id, account._id, environment);
    if (!view) throw new AppError('task_not_found', `No task ${id}`);
    res.json(renderTask(view));
  };
}
