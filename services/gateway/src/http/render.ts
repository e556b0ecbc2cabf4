import type { Task, TaskListItem, WaitingData } from '@tes/contracts';
import type { TaskViewDoc } from '../store/task-view.repository.js';

/**
 * Spec 2.1 present-when rules: result/completed_at only when complete, error/failed_at only when
 * failed; `waiting` (see waiting.ts) only when waiting.
 */
export function renderTask(v: TaskViewDoc, waiting?: WaitingData): Task {
  return {
    id: v._id,
    status: v.status,
    tool: v.tool,
    created_at: v.created_at,
    ...(v.status === 'complete' && v.completed_at ? { completed_at: v.completed_at } : {}),
    ...(v.status === 'failed' && v.failed_at ? { failed_at: v.failed_at } : {}),
    ...(v.status === 'complete' ? { result: v.result ?? {} } : {}),
    ...(v.status === 'failed' && v.error ? { error: v.error } : {}),
    metadata: v.metadata ?? {},
    ...(v.status === 'waiting' && waiting ? { waiting } : {}),
  };
}

/** List items carry only id, status, tool, created_at, completed_at. */
export function renderListItem(v: TaskViewDoc): TaskListItem {
  return {
    id: v._id,
    status: v.status,
    tool: v.tool,
    created_at: v.created_at,
    ...(v.status === 'complete' && v.completed_at ? { completed_at: v.completed_at } : {}),
  };
}
