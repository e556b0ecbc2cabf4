/**
 * The SDK writes the API's types out by hand (no dependency on internal packages). These
 * checks keep them equal to the service's own schemas and error taxonomy: the type-level
 * part fails `pnpm typecheck` (tsconfig.check.json), the rest fails here. The service's packages
 * are read from their sources by path, so the published package.json names no workspace package.
 */
import * as contracts from '../../contracts/src/index.js';
import { API_ERROR_STATUS, type ApiErrorCode as ServiceErrorCode } from '../../errors/src/index.js';
import { errorClassFor, type ApiErrorCode } from './errors.js';
import { CREATE_TASK_FIELDS, LIST_TASKS_FIELDS, TOOL_ACTION_FIELDS, TOOL_MANIFEST_FIELDS, TOOL_OAUTH_FIELDS } from './fields.js';
import * as sdk from './types.js';

type Both<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(): T => true as T;

same<Both<sdk.TaskStatus, contracts.TaskStatus>>();
same<Both<ApiErrorCode, ServiceErrorCode>>();
same<Both<sdk.WebhookEventName, contracts.WebhookEventName>>();
same<Both<sdk.ToolHttpMethod, (typeof contracts.HTTP_METHODS)[number]>>();
// a manifest and a tool are the same both ways: what the SDK sends or reads is exactly the schema
same<Both<sdk.ToolManifest, contracts.ToolManifest>>();
same<Both<sdk.Tool, contracts.ToolView>>();
same<Both<sdk.ToolAction, contracts.ToolAction>>();
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
  tool: (t: contracts.ToolView): sdk.Tool => t,
  action: (t: contracts.ToolAction): sdk.ToolAction => t,
};
// and every create body the SDK may send is one the service accepts
const asService = {
  create: (b: sdk.CreateTaskParams): contracts.CreateTaskBody => b,
  tool: (m: sdk.ToolManifest): contracts.ToolManifest => m,
};

describe('the SDK types match the service contracts', () => {
  it('has the same statuses, step statuses and webhook event names', () => {
    expect(sdk.TASK_STATUSES).toEqual(contracts.TASK_STATUSES);
    expect([...sdk.TERMINAL_STATUSES].sort()).toEqual([...contracts.TERMINAL_STATUSES].sort());
    expect(sdk.STEP_STATUSES).toEqual(contracts.STEP_STATUSES);
    expect(sdk.WEBHOOK_EVENTS).toEqual(contracts.WEBHOOK_EVENTS);
    expect(sdk.TOOL_HTTP_METHODS).toEqual(contracts.HTTP_METHODS);
    expect(sdk.SIDE_EFFECTS).toEqual(contracts.toolActionSchema.properties.side_effect.enum);
    expect(Object.keys(asSdk)).toHaveLength(12);
    expect(Object.keys(asService)).toEqual(['create', 'tool']);
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
      waiting: { reason: '', service: '', auth_url: '', message: '' },
    };
    expect(Object.keys(task).sort()).toEqual(fields(contracts.taskSchema));
    const create: Required<sdk.CreateTaskParams> = { prompt: '', user_id: null, metadata: {}, mode: 'live' };
    expect(Object.keys(create).sort()).toEqual(fields(contracts.createTaskBodySchema));
    const list: Required<sdk.ListTasksParams> = { status: 'complete', user_id: '', limit: 1, offset: 0 };
    expect(Object.keys(list).sort()).toEqual(fields(contracts.listTasksQuerySchema));

    const link: Required<sdk.SettingsLink> = { url: '', expires_at: '' };
    expect(Object.keys(link).sort()).toEqual(fields(contracts.settingsLinkSchema));
    expect([...contracts.settingsLinkSchema.required].sort()).toEqual(Object.keys(link).sort());
    const oauth: Required<sdk.ToolOAuth> = {
      authorize_url: '',
      token_url: '',
      revocation_url: '',
      scopes: [],
      client_id: '',
      pkce: true,
      token_auth: 'post',
    };
    expect(Object.keys(oauth).sort()).toEqual(fields(contracts.toolViewSchema.properties.oauth));
    expect(Object.keys({ ...oauth, client_secret: '' }).sort()).toEqual(fields(contracts.toolManifestSchema.properties.oauth));
    const action: Required<sdk.ToolAction> = {
      name: '',
      description: '',
      method: 'GET',
      path: '/',
      input_schema: {},
      side_effect: 'read',
      scopes: [],
      keywords: [],
    };
    expect(Object.keys(action).sort()).toEqual(fields(contracts.toolActionSchema));
    const tool: Required<sdk.Tool> = { name: '', description: '', keywords: [], base_url: '', actions: [action], oauth, created_at: '' };
    expect(Object.keys(tool).sort()).toEqual(fields(contracts.toolViewSchema));
    const { created_at: _created, ...manifest } = { ...tool, oauth: { ...oauth, client_secret: '' } };
    expect(Object.keys(manifest satisfies Required<sdk.ToolManifest>).sort()).toEqual(fields(contracts.toolManifestSchema));
  });

  it('refuses, before any request, exactly the fields the schemas do not name', () => {
    const fields = (schema: { properties: object }) => Object.keys(schema.properties).sort();
    expect(Object.keys(CREATE_TASK_FIELDS).sort()).toEqual(fields(contracts.createTaskBodySchema));
    expect(Object.keys(LIST_TASKS_FIELDS).sort()).toEqual(fields(contracts.listTasksQuerySchema));
    expect(Object.keys(TOOL_MANIFEST_FIELDS).sort()).toEqual(fields(contracts.toolManifestSchema));
    expect(Object.keys(TOOL_OAUTH_FIELDS).sort()).toEqual(fields(contracts.toolManifestSchema.properties.oauth));
    expect(Object.keys(TOOL_ACTION_FIELDS).sort()).toEqual(fields(contracts.toolActionSchema));
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
