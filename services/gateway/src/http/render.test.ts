import { compile, taskListItemSchema, taskSchema, type TaskStatus } from '@tes/contracts';
import type { TaskViewDoc } from '../store/task-view.repository.js';
import { renderListItem, renderTask } from './render.js';

/** Spec 2.1 present-when rules, for every status (a failed task cannot be produced end to end yet). */
describe('rendering a task', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const view = (status: TaskStatus, extra: Partial<TaskViewDoc> = {}): TaskViewDoc => ({
    _id: 'task_1',
    account_id: 'acct_1',
    environment: 'test',
    user_id: 'user_9',
    status,
    tool: 'text',
    metadata: { ref: 'r' },
    created_at: at,
    version: 3,
    ...extra,
  });
  const error = {
    code: 'service_unavailable',
    message: 'GitHub answered 503 three times',
    tool: 'github',
    recoverable: true,
    suggestion: 'Retry later',
  };
  const checkTask = compile(taskSchema);
  const checkItem = compile(taskListItemSchema);

  it.each<[TaskStatus, Partial<TaskViewDoc>, string[]]>([
    ['pending', {}, ['created_at', 'id', 'metadata', 'status', 'tool']],
    ['running', {}, ['created_at', 'id', 'metadata', 'status', 'tool']],
    ['waiting', {}, ['created_at', 'id', 'metadata', 'status', 'tool']],
    [
      'complete',
      { completed_at: at, result: { text: 'hi' } },
      ['completed_at', 'created_at', 'id', 'metadata', 'result', 'status', 'tool'],
    ],
    ['failed', { failed_at: at, error }, ['created_at', 'error', 'failed_at', 'id', 'metadata', 'status', 'tool']],
    ['cancelled', { cancelled_at: at }, ['created_at', 'id', 'metadata', 'status', 'tool']],
  ])('a %s task has exactly its fields on get, and never user_id', (status, extra, fields) => {
    const t = renderTask(view(status, extra));
    expect(Object.keys(t).sort()).toEqual(fields);
    expect(checkTask(t)).toBe(true);
    expect(t).not.toHaveProperty('user_id');
  });

  it('shows the failed task error with code, message, tool, recoverable and suggestion', () => {
    expect(renderTask(view('failed', { failed_at: at, error })).error).toEqual(error);
  });

  it('defaults metadata to an empty object', () => {
    expect(renderTask(view('running', { metadata: undefined as never })).metadata).toEqual({});
  });

  it.each<[TaskStatus, Partial<TaskViewDoc>, string[]]>([
    ['running', {}, ['created_at', 'id', 'status', 'tool']],
    ['complete', { completed_at: at, result: { text: 'hi' } }, ['completed_at', 'created_at', 'id', 'status', 'tool']],
    ['failed', { failed_at: at, error }, ['created_at', 'id', 'status', 'tool']],
    ['cancelled', { cancelled_at: at }, ['created_at', 'id', 'status', 'tool']],
  ])('a %s list item carries only id, status, tool, created_at and completed_at', (status, extra, fields) => {
    const item = renderListItem(view(status, extra));
    expect(Object.keys(item).sort()).toEqual(fields);
    expect(checkItem(item)).toBe(true);
  });
});
