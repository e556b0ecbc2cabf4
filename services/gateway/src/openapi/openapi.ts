import {
  LIST_LIMIT_MAX,
  PROMPT_MAX_CHARS,
  cancelledTaskSchema,
  connectionListSchema,
  settingsLinkSchema,
  connectionPathSchema,
  connectionViewSchema,
  createTaskBodySchema,
  createdTaskSchema,
  errorEnvelopeSchema,
  listTasksQuerySchema,
  taskErrorSchema,
  taskListItemSchema,
  taskListSchema,
  taskSchema,
  traceSchema,
  traceStepSchema,
  tracePlannerSchema,
  plannedStepSchema,
  toolListSchema,
  toolManifestSchema,
  toolPathSchema,
  toolViewSchema,
} from '@tes/contracts';
import { API_ERROR_STATUS, type ApiErrorCode } from '@tes/errors';

/**
 * The OpenAPI 3.1 document of the public API, generated from the JSON Schemas of
 * @tes/contracts (the same objects ajv checks requests with), never copied by hand.
 * A schema that appears inside another is emitted once, under components, and
 * referenced; `$id`s are dropped (OpenAPI names schemas by their component key).
 */
export const COMPONENT_SCHEMAS = {
  CreateTaskBody: createTaskBodySchema,
  CreatedTask: createdTaskSchema,
  Task: taskSchema,
  TaskError: taskErrorSchema,
  TaskListItem: taskListItemSchema,
  TaskList: taskListSchema,
  CancelledTask: cancelledTaskSchema,
  TaskTrace: traceSchema,
  TraceStep: traceStepSchema,
  TracePlanner: tracePlannerSchema,
  PlannedStep: plannedStepSchema,
  Connection: connectionViewSchema,
  ConnectionList: connectionListSchema,
  SettingsLink: settingsLinkSchema,
  ToolManifest: toolManifestSchema,
  Tool: toolViewSchema,
  ToolList: toolListSchema,
  ErrorEnvelope: errorEnvelopeSchema,
} as const satisfies Record<string, object>;

type ComponentName = keyof typeof COMPONENT_SCHEMAS;
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

/** Deep copy of a contract schema; nested contract schemas become $refs. */
export function toOpenApiSchema(schema: object, self?: ComponentName): Json {
  const names = new Map<object, ComponentName>();
  for (const [name, s] of Object.entries(COMPONENT_SCHEMAS)) names.set(s, name as ComponentName);
  const walk = (v: unknown, root: boolean): Json => {
    if (v === null || typeof v !== 'object') return v as Json;
    const named = names.get(v);
    if (named && !(root && named === self)) return ref(named);
    if (Array.isArray(v)) return v.map((x) => walk(x, false));
    const out: { [k: string]: Json } = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '$id') continue;
      out[k] = walk(x, false);
    }
    return out;
  };
  return walk(schema, true);
}

interface OperationSpec {
  operationId: string;
  summary: string;
  description: string;
  tag: 'Tasks' | 'Connections' | 'Tools' | 'Meta';
  parameters?: Json[];
  requestBody?: Json;
  success: { status: number; description: string; schema?: ComponentName; headers?: Record<string, Json> };
  /** Error codes this operation answers with besides the ones every authenticated call can. */
  errors: ApiErrorCode[];
  /** Calls another service (request/reply): may answer 503 temporarily_unavailable. */
  upstream?: boolean;
  /** Load-shed before the rate limit: its 503 may come without X-RateLimit-* (nothing was counted). */
  shed?: boolean;
  public?: boolean;
}

/** Every authenticated operation can answer these. */
const AUTHENTICATED_ERRORS: ApiErrorCode[] = [
  'invalid_request',
  'missing_api_key',
  'invalid_api_key',
  'account_disabled',
  'request_too_large',
  'rate_limit_exceeded',
  'internal_error',
];

const RATE_HEADERS = {
  'X-RateLimit-Limit': { $ref: '#/components/headers/X-RateLimit-Limit' },
  'X-RateLimit-Remaining': { $ref: '#/components/headers/X-RateLimit-Remaining' },
  'X-RateLimit-Reset': { $ref: '#/components/headers/X-RateLimit-Reset' },
};
const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
const RETRY_AFTER_HEADER = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };

const taskIdParam: Json = {
  name: 'task_id',
  in: 'path',
  required: true,
  description: 'The task id (prefix `task_`). An id of another environment or account is 404 task_not_found.',
  schema: { type: 'string' },
};

function pathParam(name: 'user_id' | 'service', description: string): Json {
  return { name, in: 'path', required: true, description, schema: toOpenApiSchema(connectionPathSchema.properties[name]) };
}

const toolNameParam: Json = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'The tool name.',
  schema: toOpenApiSchema(toolPathSchema.properties.name),
};

const OPERATIONS: Record<string, Partial<Record<'get' | 'post' | 'delete', OperationSpec>>> = {
  '/tasks': {
    post: {
      operationId: 'createTask',
      summary: 'Create a task',
      tag: 'Tasks',
      description:
        `Starts a task and answers at once. \`status\` is \`running\`, or \`pending\` when the account is at its concurrent-task limit (it starts FIFO when a running task ends). ` +
        `The prompt may have at most ${PROMPT_MAX_CHARS} characters counted in Unicode code points (an emoji is one); more is 422 prompt_too_long. ` +
        '`user_id` and `mode` are accepted and never echoed. With `Idempotency-Key`, a repeat with the same body gets the original answer (header `Idempotent-Replayed: true`). ' +
        'The task is planned before the answer: a request the planner refuses is 422 with a `suggestion` of how to say it: ' +
        '`no_matching_tool` (nothing the service does was recognised), `missing_input` (the action is clear but a required input is not in the prompt; `missing` names it), ' +
        '`unsupported_request` (understood, but not something the service does now: a trigger on a future event, an unclear request). `tool` is the tool the plan uses. ' +
        "With an LLM planner configured, the answer waits for the model (at most the gateway's create timeout).",
      parameters: [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Client-chosen key, 1 to 255 printable ASCII characters, kept 24 hours per account and environment. Same key and body: the original answer, no new task. ' +
            'Other body: 409 idempotency_key_reused. While the first request runs: 409 idempotency_key_in_progress.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: ref('CreateTaskBody') } } },
      success: {
        status: 201,
        description: 'The task was created.',
        schema: 'CreatedTask',
        headers: { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } },
      },
      errors: [
        'idempotency_key_reused',
        'idempotency_key_in_progress',
        'prompt_too_long',
        'no_matching_tool',
        'missing_input',
        'unsupported_request',
      ],
      upstream: true,
      shed: true,
    },
    get: {
      operationId: 'listTasks',
      summary: 'List tasks',
      tag: 'Tasks',
      description: `Newest first (created_at, then id, descending), stable under offset paging. At most ${LIST_LIMIT_MAX} items a page. Items omit result and error.`,
      parameters: Object.entries(listTasksQuerySchema.properties).map(([name, schema]) => ({
        name,
        in: 'query',
        required: false,
        schema: toOpenApiSchema(schema),
      })),
      success: { status: 200, description: 'A page of tasks.', schema: 'TaskList' },
      errors: [],
    },
  },
  '/tasks/{task_id}': {
    get: {
      operationId: 'getTask',
      summary: 'Get a task',
      tag: 'Tasks',
      description: '`completed_at` and `result` only when complete; `failed_at` and `error` only when failed.',
      parameters: [taskIdParam],
      success: { status: 200, description: 'The task.', schema: 'Task' },
      errors: ['task_not_found'],
    },
  },
  '/tasks/{task_id}/cancel': {
    post: {
      operationId: 'cancelTask',
      summary: 'Cancel a task',
      tag: 'Tasks',
      description: 'Cancels a pending, running or waiting task. No request body.',
      parameters: [taskIdParam],
      success: { status: 200, description: 'The task is cancelled.', schema: 'CancelledTask' },
      errors: ['task_not_found', 'task_already_complete'],
      upstream: true,
    },
  },
  '/tasks/{task_id}/trace': {
    get: {
      operationId: 'getTaskTrace',
      summary: 'Get the trace of a task',
      tag: 'Tasks',
      description:
        "The steps run so far, in execution order; `planner`: which planner made the plan (`rules`, or `llm` with its `model`; `fallback_reason` when a configured model's plan was not used); " +
        "`planned_steps`: a test-mode task's planned steps (nothing runs), each with its side-effect class and the required inputs it lacks.",
      parameters: [taskIdParam],
      success: { status: 200, description: 'The trace.', schema: 'TaskTrace' },
      errors: ['task_not_found'],
      upstream: true,
    },
  },
  '/users/{user_id}/connections': {
    get: {
      operationId: 'listConnections',
      summary: "List a user's connected services",
      tag: 'Connections',
      description: 'The services the end user has authorized for this account and environment. Never carries a token.',
      parameters: [pathParam('user_id', 'The end user (the `user_id` given at task creation).')],
      success: { status: 200, description: "The user's connections.", schema: 'ConnectionList' },
      errors: [],
      upstream: true,
    },
  },
  '/users/{user_id}/settings_link': {
    post: {
      operationId: 'createSettingsLink',
      summary: "Make a link to the user's settings page",
      tag: 'Connections',
      description:
        'A signed, expiring link (default 1 h) to the hosted page where the end user sees their connected services and revokes them. Give it to the user; it needs no key.',
      parameters: [pathParam('user_id', 'The end user.')],
      success: { status: 201, description: 'The link and when it expires.', schema: 'SettingsLink' },
      errors: [],
      upstream: true,
    },
  },
  '/users/{user_id}/connections/{service}': {
    delete: {
      operationId: 'revokeConnection',
      summary: "Revoke a user's connection to a service",
      tag: 'Connections',
      description: 'Revokes and forgets the stored authorization. A task needing the service asks the user again (task.waiting).',
      parameters: [pathParam('user_id', 'The end user.'), pathParam('service', 'The connected service, e.g. `github`.')],
      success: { status: 204, description: 'Revoked.' },
      errors: ['connection_not_found'],
      upstream: true,
    },
  },
  '/tools': {
    post: {
      operationId: 'registerTool',
      summary: 'Register a custom tool',
      tag: 'Tools',
      description:
        "Creates (201) or replaces (200) the custom HTTP tool of this name in the key's environment. The planner and the executor then treat it like a built-in. " +
        'With an `oauth` block the tool acts for end users: its client secret is encrypted by the oauth-vault and never shown again. ' +
        "Test keys never call the tool's API: their steps answer the request they would make.",
      requestBody: { required: true, content: { 'application/json': { schema: ref('ToolManifest') } } },
      success: { status: 201, description: 'The tool, without its client secret (200 when it replaced one).', schema: 'Tool' },
      errors: [],
      upstream: true,
    },
    get: {
      operationId: 'listTools',
      summary: 'List custom tools',
      tag: 'Tools',
      description: "The custom tools of the key's environment, by name.",
      success: { status: 200, description: 'The tools.', schema: 'ToolList' },
      errors: [],
      upstream: true,
    },
  },
  '/tools/{name}': {
    get: {
      operationId: 'getTool',
      summary: 'Get a custom tool',
      tag: 'Tools',
      description: 'One custom tool, without its client secret.',
      parameters: [toolNameParam],
      success: { status: 200, description: 'The tool.', schema: 'Tool' },
      errors: ['not_found'],
      upstream: true,
    },
    delete: {
      operationId: 'deleteTool',
      summary: 'Delete a custom tool',
      tag: 'Tools',
      description:
        "New tasks can no longer use it; its OAuth client and the users' connections to it are forgotten. Tasks already planned keep their copy.",
      parameters: [toolNameParam],
      success: { status: 204, description: 'Deleted.' },
      errors: ['not_found'],
      upstream: true,
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'getOpenApi',
      summary: 'This document',
      tag: 'Meta',
      description: 'The OpenAPI 3.1 document of the API. No authentication.',
      success: { status: 200, description: 'The OpenAPI document.' },
      errors: [],
      public: true,
    },
  },
};

/** X-RateLimit-* of a 503 that load shedding may have answered before the limiter counted it. */
const SHED_RATE_HEADERS = Object.fromEntries(
  Object.keys(RATE_HEADERS).map((name) => [
    name,
    {
      description: "Absent when the create was shed (its account's creates are queueing): not counted.",
      required: false,
      schema: { type: 'integer', minimum: 0 },
    },
  ]),
);

function errorResponse(status: number, codes: ApiErrorCode[], shed = false): Json {
  const headers: Record<string, Json> = { ...REQUEST_ID_HEADER };
  // Authentication runs before the limiter: 401 and 403 are not counted and carry no X-RateLimit-*.
  if (status !== 401 && status !== 403) Object.assign(headers, shed && status === 503 ? SHED_RATE_HEADERS : RATE_HEADERS);
  if (status === 429 || status === 503) Object.assign(headers, RETRY_AFTER_HEADER);
  return {
    description: codes.map((c) => `\`${c}\``).join(', '),
    headers,
    content: {
      'application/json': {
        schema: {
          allOf: [
            ref('ErrorEnvelope'),
            { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string', enum: codes } } } } },
          ],
        },
      },
    },
  };
}

function operation(op: OperationSpec): Json {
  const codes = op.public
    ? []
    : [...new Set<ApiErrorCode>([...AUTHENTICATED_ERRORS, ...op.errors, ...(op.upstream ? (['temporarily_unavailable'] as const) : [])])];
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of codes) {
    const status = API_ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Json> = {};
  const successHeaders: Record<string, Json> = { ...REQUEST_ID_HEADER, ...(op.public ? {} : RATE_HEADERS), ...(op.success.headers ?? {}) };
  responses[String(op.success.status)] = {
    description: op.success.description,
    headers: successHeaders,
    ...(op.success.status === 204
      ? {}
      : { content: { 'application/json': { schema: op.success.schema ? ref(op.success.schema) : { type: 'object' } } } }),
  };
  for (const [status, c] of [...byStatus].sort((a, b) => a[0] - b[0])) responses[String(status)] = errorResponse(status, c, op.shed);
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    ...(op.public ? { security: [] } : {}),
    ...(op.parameters ? { parameters: op.parameters } : {}),
    ...(op.requestBody ? { requestBody: op.requestBody } : {}),
    responses,
  };
}

const integerHeader = (description: string): Json => ({ description, required: true, schema: { type: 'integer', minimum: 0 } });

export function buildOpenApiDocument(): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const [path, ops] of Object.entries(OPERATIONS)) {
    const item: Record<string, Json> = {};
    for (const [method, op] of Object.entries(ops)) item[method] = operation(op);
    paths[path] = item;
  }
  const schemas: Record<string, Json> = {};
  for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS)) schemas[name] = toOpenApiSchema(schema, name as ComponentName);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Task Execution Service API',
      version: '1.0.0',
      description:
        'Asynchronous task execution. HTTPS only (plain HTTP is answered 403 https_required). Authenticate with `Authorization: Bearer <API_KEY>` (`pk_test_` or `pk_live_`; ' +
        'the two environments are separate worlds). Every error is `{"error": {"code", "message"}}`; every answer carries `X-Request-Id`. ' +
        'An unknown path is 404 `not_found` and a known path with another method is 405 `method_not_allowed` with `Allow`, before authentication. ' +
        'Rate limits are per account across its keys and replicas, in fixed one-minute windows; every authenticated answer carries `X-RateLimit-*`.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/v1' }],
    security: [{ apiKey: [] }],
    tags: [{ name: 'Tasks' }, { name: 'Connections' }, { name: 'Tools' }, { name: 'Meta' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `pk_test_…` or `pk_live_…`.' },
      },
      headers: {
        'X-Request-Id': {
          description: 'Identifies this request in the logs; echoes a sane caller-given X-Request-Id.',
          required: true,
          schema: { type: 'string' },
        },
        'X-RateLimit-Limit': integerHeader("The account's requests per minute."),
        'X-RateLimit-Remaining': integerHeader('Requests left in the current one-minute window.'),
        'X-RateLimit-Reset': integerHeader('Unix time (seconds) at which the current window ends.'),
        'Retry-After': integerHeader('Seconds to wait before retrying.'),
        'Idempotent-Replayed': {
          description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.',
          required: false,
          schema: { type: 'string', const: 'true' },
        },
      },
    },
  };
}
