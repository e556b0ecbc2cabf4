import type { RequestHandler } from 'express';
import type { TaskTrace } from '@tes/contracts';
import { AppError } from '@tes/errors';
import type { Broker } from '@tes/messaging';
import type { TaskViewRepository } from '../../../store/task-view.repository.js';
import { authOf } from '../../auth.js';
import { taskIdParam } from './task-id.js';
import { ask, upstreamOf } from '../../upstream.js';

/**
 * GET /v1/tasks/:task_id/trace: the executor owns the steps run; the task's read model adds which
 * planner made the plan and, for a test-mode task (nothing runs), the planned steps of its
 * preview. 404 as for get.
 */
export function getTraceRoute(deps: { broker: Broker; views: TaskViewRepository; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const { account, environment } = authOf(res);
    const id = taskIdParam(req);
    const view = await deps.views.get(id, account._id, environment);
    if (!view) throw new AppError('task_not_found', `No task ${id}`);
    const reply = await ask(upstreamOf(deps, res), 'trace.get', { task_id: id, account_id: account._id, environment });
    const { task_id, steps, total_duration_ms } = reply.trace;
    const preview = (view.result as { preview?: { steps?: unknown } } | undefined)?.preview;
    const trace: TaskTrace = {
      task_id,
      steps,
      total_duration_ms,
      ...(view.planner ? { planner: view.planner } : {}),
      ...(Array.isArray(preview?.steps) ? { planned_steps: preview.steps as NonNullable<TaskTrace['planned_steps']> } : {}),
    };
    res.json(trace);
  };
}
