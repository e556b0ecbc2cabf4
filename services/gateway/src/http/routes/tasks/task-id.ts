import type { Request } from 'express';
import { AppError } from '@tes/errors';

const TASK_ID = /^task_[A-Za-z0-9]{1,64}$/;

/** The `:task_id` path parameter. Anything that cannot be a task id is simply not found. */
export function taskIdParam(req: Request): string {
  const id = String(req.params['task_id'] ?? '');
  if (!TASK_ID.test(id)) throw new AppError('task_not_found', `No task ${id.slice(0, 80)}`);
  return id;
}
