/**
 * The SDK writes the API's types out by hand (no dependency on internal packages). These
 * checks keep them equal to the service's own schemas and error taxonomy: the type-level
 * part fails `pnpm typecheck` (tsconfig.check.json), the rest fails here.
 */
import * as contracts from '@tes/contracts';
import { API_ERROR_STATUS, type ApiErrorCode as ServiceErrorCode } from '@tes/errors';
import { errorClassFor, type ApiErrorCode } from './errors.js';
import * as sdk from './types.js';

type Both<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(): T => true as T;

same<Both<sdk.TaskStatus, contracts.TaskStatus>>();
same<Both<ApiErrorCode, ServiceErrorCode>>();
same<Both<sdk.WebhookEventName, contracts.WebhookEventName>>();
// every body the service may send is readable as the SDK type
const asSdk = {
  task: (t: contracts.Task): sdk.Task => t,
  created: (t: contracts.CreatedTask): sdk.CreatedTask => t,
  item: (t: contracts.TaskListItem): sdk.TaskListItem => t,
  cancelled: (t: contracts.CancelledTask): sdk.CancelledTask => t,
  trace: (t: contracts.TaskTrace): sdk.TaskTrace => t,
  step: (t: contracts.TraceStep): sdk.TraceStep => t,
  error: (t: contracts.TaskError): sdk.TaskError => t,
  connection: (t: contracts.ConnectionView): sdk.Connection => t,
  progress: (t: contracts.ProgressData): sdk.ProgressData => t,
  waiting: (t: contracts.WaitingData): sdk.WaitingData => t,
};
// and every create body the SDK may send is one the service accepts
const asService = { create: (b: sdk.CreateTaskParams): contracts.CreateTaskBody => b };

describe('the SDK types match the service contracts', () => {
  it('has the same statuses, step statuses and webhook event names', () => {
    expect(sdk.TASK_STATUSES).toEqual(contracts.TASK_STATUSES);
    expect([...sdk.TERMINAL_STATUSES].sort()).toEqual([...contracts.TERMINAL_STATUSES].sort());
    expect(sdk.STEP_STATUSES).toEqual(contracts.STEP_STATUSES);
    expect(sdk.WEBHOOK_EVENTS).toEqual(contracts.WEBHOOK_EVENTS);
    expect(Object.keys(asSdk)).toHaveLength(10);
    expect(Object.keys(asService)).toEqual(['create']);
  });

  it('names every field of the API bodies the schemas name', () => {
    const fields = (schema: { properties: object }) => Object.keys(schema.properties).sort();
    const task: Required<sdk.Task> = {
      id: '',
      status: 'complete',
      tool: '',
      created_at: '',
      completed_at: '',
      failed_at: '',
      result: {},
      error: { code: '', message: '', tool: '', recoverable: false, suggestion: '' },
      metadata: {},
    };
    expect(Object.keys(task).sort()).toEqual(fields(contracts.taskSchema));
    const create: Required<sdk.CreateTaskParams> = { prompt: '', user_id: null, metadata: {}, mode: 'live' };
    expect(Object.keys(create).sort()).toEqual(fields(contracts.createTaskBodySchema));
    const list: Required<sdk.ListTasksParams> = { status: 'complete', user_id: '', limit: 1, offset: 0 };
    expect(Object.keys(list).sort()).toEqual(fields(contracts.listTasksQuerySchema));
  });

  it('maps every API error code to the right error class by its status', () => {
    const byStatus: Record<number, string> = {
      400: 'InvalidRequestError',
      401: 'AuthenticationError',
      403: 'PermissionDeniedError',
      404: 'NotFoundError',
      405: 'InvalidRequestError',
      409: 'ConflictError',
      413: 'InvalidRequestError',
      422: 'InvalidRequestError',
      429: 'RateLimitError',
      500: 'ServerError',
      503: 'ServerError',
    };
    for (const [code, status] of Object.entries(API_ERROR_STATUS)) {
      expect([code, errorClassFor(status).name]).toEqual([code, byStatus[status]]);
    }
  });
});
