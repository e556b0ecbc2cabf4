import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import type { TaskViewRepository } from '../../../store/task-view.repository.js';
import { authOf } from '../../auth.js';
import { taskIdParam } from './task-id.js';
import { ask, taskOrApiError, upstreamOf } from '../../upstream.js';

/** POST /v1/tasks/:task_id/cancel: decided by the orchestrator, the task's single writer. */
export function cancelTaskRoute(deps: { broker: Broker; views: TaskViewRepository; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const { account, environment } = authOf(res);
    const id = taskIdParam(req);
    const reply = await ask(upstreamOf(deps, res), 'task.cancel', { task_id: id, account_id: account._id, environment }, account._id);
    const { task, version } = taskOrApiError(reply);
    if (!('cancelled_at' in task)) throw new Error('task.cancel was answered with a created task');
    // Read-your-writes: the cancelled state is visible to the next GET, before the event lands.
    const view = await deps.views.get(id, account._id, environment);
    if (view) await deps.views.apply({ ...view, status: 'cancelled', cancelled_at: task.cancelled_at, version });
    res.json({ id: task.id, status: task.status, cancelled_at: task.cancelled_at });
  };
}
