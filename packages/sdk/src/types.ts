/**
 * The public API's bodies (spec sections 2, 4 and 6), written out by hand so the SDK has no
 * runtime or type dependency on the service's internal packages. `types.compat.test.ts`
 * checks, at compile time and at run time, that they match the JSON Schemas in
 * `@tes/contracts`, so the two cannot drift apart unnoticed.
 *
 * Field names are the wire names (snake_case): what you read here is what the API sent.
 */

export const TASK_STATUSES = ['pending', 'running', 'complete', 'failed', 'waiting', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** A task in one of these states never changes again. */
export const TERMINAL_STATUSES = ['complete', 'failed', 'cancelled'] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export function isTerminalStatus(status: string): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

export type Metadata = Record<string, unknown>;

/** Spec 2.2: why a task failed. `code` is one of spec 7.4 (auth_token_expired, ...). */
export interface TaskError {
  code: string;
  message: string;
  tool: string;
  recoverable: boolean;
  suggestion?: string;
}

/** GET /tasks/:task_id (spec 2.1). */
export interface Task {
  id: string;
  status: TaskStatus;
  tool: string;
  created_at: string;
  /** Set when `status` is `complete`. */
  completed_at?: string;
  /** Set when `status` is `failed`. */
  failed_at?: string;
  /** Set when `status` is `complete`; its shape depends on the prompt and the tool. */
  result?: Record<string, unknown>;
  /** Set when `status` is `failed`. */
  error?: TaskError;
  metadata: Metadata;
  /**
   * Set when `status` is `waiting`: what the task waits for. Its `auth_url` is a consent link for
   * the task's end user, single-use and valid a few minutes; every read gives a fresh one.
   */
  waiting?: WaitingData;
}

/** POST /tasks answer (201). */
export interface CreatedTask {
  id: string;
  status: TaskStatus;
  tool: string;
  created_at: string;
  metadata: Metadata;
}

/** An item of GET /tasks: no result, no error. */
export interface TaskListItem {
  id: string;
  status: TaskStatus;
  tool: string;
  created_at: string;
  completed_at?: string;
}

/** Spec 2.4 collection envelope. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
}

export type TaskList = Page<TaskListItem>;

/** POST /tasks/:task_id/cancel answer. */
export interface CancelledTask {
  id: string;
  status: 'cancelled';
  cancelled_at: string;
}

export const STEP_STATUSES = ['complete', 'failed', 'skipped', 'cancelled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export interface TraceStep {
  tool: string;
  action: string;
  status: StepStatus;
  duration_ms: number;
  note?: string;
}

/** GET /tasks/:task_id/trace (spec 2.3). */
export interface TaskTrace {
  task_id: string;
  steps: TraceStep[];
  total_duration_ms: number;
}

/** One of a user's connected third-party services (never a token). */
export interface Connection {
  service: string;
  scopes: string[];
  status: 'connected' | 'broken' | 'revoked';
  connected_at: string;
}

export type ConnectionList = Page<Connection>;

/** POST /users/:user_id/settings_link answer (201): a signed, expiring link to the end user's settings page. */
export interface SettingsLink {
  /** Hand it to the end user; the page lists their connections and lets them revoke each one. */
  url: string;
  /** ISO 8601 time after which the link no longer opens. */
  expires_at: string;
}

// ---- custom tools (POST/GET /tools, GET/DELETE /tools/:name) ----

export const TOOL_HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ToolHttpMethod = (typeof TOOL_HTTP_METHODS)[number];

export const SIDE_EFFECTS = ['read', 'write', 'destructive'] as const;
export type SideEffect = (typeof SIDE_EFFECTS)[number];

/** One HTTP call a custom tool can make. */
export interface ToolAction {
  /** `^[a-z][a-z0-9_]{0,39}$`, unique within the tool. */
  name: string;
  description: string;
  method: ToolHttpMethod;
  /** Appended to the tool's `base_url`; `{field}` takes that input field, which must be required. */
  path: string;
  /** A JSON Schema with `"type": "object"`. */
  input_schema: Record<string, unknown>;
  /** Default: `read` for GET, `destructive` for DELETE, `write` otherwise. */
  side_effect?: SideEffect;
  /** Scopes this action needs beyond the tool's `oauth.scopes`. */
  scopes?: string[];
  /** Words that make the planner pick this action (verbs mostly). */
  keywords?: string[];
}

/** The tool's own OAuth 2.0 provider, as shown: never the client secret. */
export interface ToolOAuth {
  authorize_url: string;
  token_url: string;
  /** RFC 7009 revocation endpoint. */
  revocation_url?: string;
  scopes?: string[];
  client_id: string;
  pkce?: boolean;
  /** Client authentication at the token endpoint. */
  token_auth?: 'basic' | 'post';
}

/** POST /tools body: registers a tool, or replaces the one of that name. */
export interface ToolManifest {
  /** `^[a-z][a-z0-9_]{2,39}$`, not a built-in tool or service; also the OAuth service name. */
  name: string;
  description: string;
  /** Words that make the planner pick this tool (nouns mostly). */
  keywords?: string[];
  /** http(s) URL the action paths are appended to. */
  base_url: string;
  /** 1 to 30. */
  actions: ToolAction[];
  /** Absent: the tool needs no user and sends no token. The secret is encrypted and never shown again. */
  oauth?: ToolOAuth & { client_secret: string };
}

/** A registered custom tool (POST /tools answer, GET /tools/:name): the manifest without the client secret. */
export interface Tool {
  name: string;
  description: string;
  keywords?: string[];
  base_url: string;
  actions: ToolAction[];
  oauth?: ToolOAuth;
  /** Kept when a registration replaces the tool. */
  created_at: string;
}

/** GET /tools: every custom tool of the key's environment, by name (`has_more` is false). */
export type ToolList = Page<Tool>;

/** POST /tasks body (spec 4.1). */
export interface CreateTaskParams {
  /** What to do, in plain language; at most 10,000 characters. */
  prompt: string;
  /** The end user the task is for; needed by tools that act on a user's connected account. */
  user_id?: string | null;
  metadata?: Metadata;
  /** `test` selects the tool and plans the workflow without running anything. Default `live`. */
  mode?: 'live' | 'test';
}

/** GET /tasks query (spec 4.3). */
export interface ListTasksParams {
  status?: TaskStatus;
  user_id?: string;
  /** 1..100, default 20. */
  limit?: number;
  /** Default 0. */
  offset?: number;
}

// ---- webhooks (spec 6) ----

export const WEBHOOK_EVENTS = ['task.complete', 'task.failed', 'task.progress', 'task.waiting'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

interface WebhookEnvelope<E extends WebhookEventName, D> {
  event: E;
  task_id: string;
  /** ISO 8601 time of the event. */
  timestamp: string;
  data: D;
}

export interface ProgressData {
  step: string;
  tool: string;
  message: string;
  progress_pct: number;
}

export interface WaitingData {
  /** For example `oauth_consent_required`. */
  reason: string;
  service: string;
  /** Show this URL only to the end user the task belongs to (it is single-use and expires within minutes); the task resumes after consent. */
  auth_url: string;
  message: string;
}

export type TaskCompleteEvent = WebhookEnvelope<'task.complete', Record<string, unknown>>;
export type TaskFailedEvent = WebhookEnvelope<'task.failed', { error: TaskError }>;
export type TaskProgressEvent = WebhookEnvelope<'task.progress', ProgressData>;
export type TaskWaitingEvent = WebhookEnvelope<'task.waiting', WaitingData>;

/** The body of a webhook delivery; switch on `event` to narrow `data`. */
export type WebhookEvent = TaskCompleteEvent | TaskFailedEvent | TaskProgressEvent | TaskWaitingEvent;
