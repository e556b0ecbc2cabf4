import { randomUUID } from 'node:crypto';
import { AuthenticationError, ConnectionError, TaskServiceError, WaitTimeoutError, errorClassFor } from './errors.js';
import { CREATE_TASK_FIELDS, LIST_TASKS_FIELDS, assertKnownFields, assertKnownManifestFields, type Exact } from './fields.js';
import {
  backoffDelay,
  parseRetryAfter,
  resolveRetry,
  retryAfterDelay,
  sleep,
  type ResolvedRetryOptions,
  type RetryOptions,
} from './retry.js';
import {
  fetchTransport,
  nodeTransport,
  type CaCertificates,
  type FetchLike,
  type HttpAgentLike,
  type HttpResponse,
  type Transport,
} from './transport.js';
import {
  isTerminalStatus,
  type CancelledTask,
  type ConnectionList,
  type CreateTaskParams,
  type CreatedTask,
  type ListTasksParams,
  type SettingsLink,
  type Task,
  type TaskList,
  type TaskListItem,
  type TaskTrace,
  type Tool,
  type ToolList,
  type ToolManifest,
} from './types.js';
import { SDK_VERSION } from './version.js';

/** Used when neither `baseUrl` nor `SERVICE_BASE_URL` is set. */
export const DEFAULT_BASE_URL = 'https://api.tes.example.com/v1';

export interface ClientOptions {
  /** Default: `SERVICE_API_KEY` from the environment (required one way or the other). */
  apiKey?: string | undefined;
  /** The service address including `/v1`. Default: `SERVICE_BASE_URL`, else {@link DEFAULT_BASE_URL}. */
  baseUrl?: string | undefined;
  /** Time limit of one HTTP attempt, answer included. Default 30,000 ms. */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt (429, 500, 502, 503, 504, network errors, timeouts). Default 3; 0 disables. */
  maxRetries?: number | undefined;
  /** Backoff between retries. */
  retry?: RetryOptions | undefined;
  /** Accept any TLS certificate: for a development gateway with a self-signed certificate only. */
  insecure?: boolean | undefined;
  /** Extra trusted CA certificate(s) (PEM), the safe alternative to `insecure`. `NODE_EXTRA_CA_CERTS` works too. */
  ca?: CaCertificates | undefined;
  /** A node:http(s) Agent for every request (proxies, custom TLS, socket limits). */
  agent?: HttpAgentLike | undefined;
  /** A fetch to use instead of the global one (e.g. bound to an undici dispatcher). Ignored when `insecure`, `ca` or `agent` is set. */
  fetch?: FetchLike | undefined;
  /** Extra headers on every request. */
  headers?: Record<string, string> | undefined;
  /** Called before each retry: logging, metrics. */
  onRetry?: ((info: RetryInfo) => void) | undefined;
}

export interface RetryInfo {
  method: string;
  path: string;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  error: TaskServiceError;
}

export interface RequestOptions {
  /** Cancels the call (and its retries); it then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  maxRetries?: number | undefined;
}

export interface CreateTaskOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`. Default: a new random UUID per call, reused by every retry of
   * that call, so a retry never creates a second task. Pass your own (your order id, ...) to
   * make the create idempotent across processes too; keys are kept 24 hours.
   */
  idempotencyKey?: string | undefined;
}

export interface WaitForTaskOptions {
  /** Give up (WaitTimeoutError) after this long. Default 300,000 ms; `Infinity` waits forever. */
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** First pause between polls. Default 500 ms. */
  initialIntervalMs?: number | undefined;
  /** Longest pause between polls. Default 5,000 ms. */
  maxIntervalMs?: number | undefined;
  /** Growth of the pause per poll. Default 1.5. */
  multiplier?: number | undefined;
  /** Sees every state polled (e.g. to notice `waiting`). */
  onPoll?: ((task: Task) => void) | undefined;
}

/**
 * createTask's answer: the API's body, plus `replayed`, true when the service answered a repeated
 * `Idempotency-Key` with the original answer (`Idempotent-Replayed: true`) instead of creating a
 * task. `replayed` is not enumerable, so the object still spreads and serializes as the body sent.
 */
export type CreateTaskResult = CreatedTask & { readonly replayed: boolean };

/** The list filters iterateTasks takes: every one but `offset`, which it moves itself. */
export type IterateTasksParams = Omit<ListTasksParams, 'offset'>;

const { offset: _offset, ...ITERATE_TASKS_FIELDS } = LIST_TASKS_FIELDS;

interface Answer<T> {
  status: number;
  body: T;
  /** Lower-case names. */
  headers: Record<string, string>;
}

interface Call {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 504]);

/**
 * Client of the public API (spec section 4). One method per endpoint; results are the API's
 * JSON bodies, typed. Every failure is a {@link TaskServiceError}.
 *
 * ```ts
 * const client = new TaskServiceClient(); // SERVICE_API_KEY, SERVICE_BASE_URL
 * const { id } = await client.createTask({ prompt: 'Echo "hello"' });
 * const task = await client.waitForTask(id);
 * ```
 */
export class TaskServiceClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  private readonly apiKey: string;
  private readonly retry: ResolvedRetryOptions;
  private readonly transport: Transport;
  private readonly extraHeaders: Record<string, string>;
  private readonly onRetry: ((info: RetryInfo) => void) | undefined;

  constructor(options: ClientOptions = {}) {
    const apiKey = options.apiKey ?? process.env['SERVICE_API_KEY'];
    if (!apiKey) {
      throw new AuthenticationError({ code: 'missing_api_key', message: 'No API key: pass apiKey or set SERVICE_API_KEY' });
    }
    this.apiKey = apiKey;
    const base = options.baseUrl ?? (process.env['SERVICE_BASE_URL'] || DEFAULT_BASE_URL);
    let parsed: URL;
    try {
      parsed = new URL(base);
    } catch {
      throw new TypeError(`baseUrl is not a URL: ${base}`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new TypeError(`baseUrl must be https (or http): ${base}`);
    this.baseUrl = base.replace(/\/+$/, '');
    this.timeoutMs = positive(options.timeoutMs ?? 30_000, 'timeoutMs');
    this.maxRetries = retries(options.maxRetries ?? 3);
    this.retry = resolveRetry(options.retry);
    this.extraHeaders = options.headers ?? {};
    this.onRetry = options.onRetry;
    this.transport =
      options.insecure || options.ca !== undefined || options.agent !== undefined
        ? nodeTransport({ agent: options.agent, ca: options.ca, rejectUnauthorized: options.insecure ? false : undefined })
        : fetchTransport(options.fetch);
  }

  /**
   * POST /tasks. Starts a task; it runs after the answer (see {@link waitForTask}). A field the
   * API does not know is refused before any request (InvalidRequestError `invalid_request`).
   */
  async createTask<P extends CreateTaskParams>(
    params: P & Exact<CreateTaskParams, P>,
    options: CreateTaskOptions = {},
  ): Promise<CreateTaskResult> {
    assertKnownFields('createTask', params, CREATE_TASK_FIELDS);
    const body: Record<string, unknown> = { prompt: params.prompt };
    if (params.user_id !== undefined) body['user_id'] = params.user_id;
    if (params.metadata !== undefined) body['metadata'] = params.metadata;
    if (params.mode !== undefined) body['mode'] = params.mode;
    const key = options.idempotencyKey ?? randomUUID();
    const answer = await this.send<CreatedTask>({ method: 'POST', path: '/tasks', body, headers: { 'Idempotency-Key': key } }, options);
    if (typeof answer.body !== 'object' || answer.body === null) {
      const requestId = answer.headers['x-request-id'];
      throw new TaskServiceError({
        code: 'invalid_response',
        status: answer.status,
        requestId,
        message: 'POST /tasks: the answer has no task',
      });
    }
    const replayed = answer.headers['idempotent-replayed']?.toLowerCase() === 'true';
    return Object.defineProperty(answer.body, 'replayed', { value: replayed, enumerable: false }) as CreateTaskResult;
  }

  /** GET /tasks/:task_id. */
  getTask(taskId: string, options: RequestOptions = {}): Promise<Task> {
    return this.request<Task>({ method: 'GET', path: `/tasks/${segment(taskId)}` }, options);
  }

  /** GET /tasks: one page, newest first. An unknown filter is refused before any request. */
  async listTasks<P extends ListTasksParams = ListTasksParams>(
    params?: P & Exact<ListTasksParams, P>,
    options: RequestOptions = {},
  ): Promise<TaskList> {
    assertKnownFields('listTasks', params ?? {}, LIST_TASKS_FIELDS);
    return this.request<TaskList>({ method: 'GET', path: '/tasks', query: { ...params } }, options);
  }

  /**
   * Every task matching `params`, page after page (`limit` is the page size). Offset paging:
   * tasks created while iterating shift the pages, so an item may be seen twice.
   */
  async *iterateTasks<P extends IterateTasksParams = IterateTasksParams>(
    params?: P & Exact<IterateTasksParams, P>,
    options: RequestOptions = {},
  ): AsyncGenerator<TaskListItem> {
    assertKnownFields('iterateTasks', params ?? {}, ITERATE_TASKS_FIELDS);
    let offset = 0;
    for (;;) {
      const page = await this.request<TaskList>({ method: 'GET', path: '/tasks', query: { ...params, offset } }, options);
      yield* page.data;
      if (!page.has_more || page.data.length === 0) return;
      offset += page.data.length;
    }
  }

  /**
   * POST /tasks/:task_id/cancel. 409 `task_already_complete` (ConflictError) when the task has
   * ended. A retried cancel whose first attempt did land (network error after sending) also
   * ends in that 409; `getTask` then shows `cancelled`.
   */
  cancelTask(taskId: string, options: RequestOptions = {}): Promise<CancelledTask> {
    return this.request<CancelledTask>({ method: 'POST', path: `/tasks/${segment(taskId)}/cancel` }, options);
  }

  /** GET /tasks/:task_id/trace. */
  getTrace(taskId: string, options: RequestOptions = {}): Promise<TaskTrace> {
    return this.request<TaskTrace>({ method: 'GET', path: `/tasks/${segment(taskId)}/trace` }, options);
  }

  /** GET /users/:user_id/connections: the third-party services the user has connected (never tokens). */
  listConnections(userId: string, options: RequestOptions = {}): Promise<ConnectionList> {
    return this.request<ConnectionList>({ method: 'GET', path: `/users/${segment(userId)}/connections` }, options);
  }

  /** DELETE /users/:user_id/connections/:service: revokes and forgets the user's tokens for the service. */
  async revokeConnection(userId: string, service: string, options: RequestOptions = {}): Promise<void> {
    await this.request<undefined>({ method: 'DELETE', path: `/users/${segment(userId)}/connections/${segment(service)}` }, options);
  }

  /**
   * POST /users/:user_id/settings_link: a signed link (one hour by default) to the end user's hosted
   * settings page, where they see and revoke their connections. Hand it to that user only.
   */
  createSettingsLink(userId: string, options: RequestOptions = {}): Promise<SettingsLink> {
    return this.request<SettingsLink>({ method: 'POST', path: `/users/${segment(userId)}/settings_link` }, options);
  }

  /**
   * POST /tools: registers a custom tool in the key's environment, or replaces the one of that
   * name (its `created_at` is kept). Returns the tool without its client secret. A replace by
   * name is idempotent, so retries are safe. 400 `invalid_request` names the manifest field; an
   * unknown field (of the manifest, its `oauth` or an action) is refused before any request.
   */
  async registerTool<P extends ToolManifest>(manifest: P & Exact<ToolManifest, P>, options: RequestOptions = {}): Promise<Tool> {
    assertKnownManifestFields(manifest);
    return this.request<Tool>({ method: 'POST', path: '/tools', body: manifest }, options);
  }

  /** GET /tools: the custom tools of the key's environment, by name (one page: `has_more` is false). */
  listTools(options: RequestOptions = {}): Promise<ToolList> {
    return this.request<ToolList>({ method: 'GET', path: '/tools' }, options);
  }

  /** GET /tools/:name. 404 `not_found` (NotFoundError) when the environment has no such tool. */
  getTool(name: string, options: RequestOptions = {}): Promise<Tool> {
    return this.request<Tool>({ method: 'GET', path: `/tools/${segment(name)}` }, options);
  }

  /**
   * DELETE /tools/:name: new tasks can no longer select it; the vault forgets its OAuth client and
   * every user's connection to it. 404 `not_found` when there is none (also when a retried delete's
   * first attempt did land).
   */
  async deleteTool(name: string, options: RequestOptions = {}): Promise<void> {
    await this.request<undefined>({ method: 'DELETE', path: `/tools/${segment(name)}` }, options);
  }

  /**
   * Polls GET /tasks/:task_id with a growing pause until the task is complete, failed or
   * cancelled, and returns it (a failed task is returned, not thrown: read `task.error`).
   * A task `waiting` for OAuth consent keeps being polled; `onPoll` sees it with `task.waiting`
   * (its `auth_url` freshly issued on each read) to show to its end user.
   */
  async waitForTask(taskId: string, options: WaitForTaskOptions = {}): Promise<Task> {
    const timeoutMs = options.timeoutMs ?? 300_000;
    const deadline = Date.now() + timeoutMs;
    const max = options.maxIntervalMs ?? 5_000;
    const multiplier = options.multiplier ?? 1.5;
    let interval = Math.min(options.initialIntervalMs ?? 500, max);
    let last: Task | undefined;
    for (;;) {
      last = await this.getTask(taskId, { signal: options.signal });
      options.onPoll?.(last);
      if (isTerminalStatus(last.status)) return last;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new WaitTimeoutError(`task ${taskId} is still ${last.status} after ${timeoutMs} ms`, last);
      }
      const pause = Math.round(interval * (0.75 + Math.random() * 0.25));
      await sleep(Math.min(pause, left), options.signal);
      interval = Math.min(max, interval * multiplier);
    }
  }

  /** Closes pooled connections of the node transport (`insecure`, `ca`); a no-op with fetch. */
  close(): void {
    this.transport.close();
  }

  private async request<T>(call: Call, options: RequestOptions): Promise<T> {
    return (await this.send<T>(call, options)).body;
  }

  /** The call with its retries; the answer's body and headers. */
  private async send<T>(call: Call, options: RequestOptions): Promise<Answer<T>> {
    const maxRetries = options.maxRetries === undefined ? this.maxRetries : retries(options.maxRetries);
    const timeoutMs = options.timeoutMs === undefined ? this.timeoutMs : positive(options.timeoutMs, 'timeoutMs');
    for (let retry = 0; ; retry++) {
      try {
        return await this.attempt<T>(call, timeoutMs, options.signal);
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (!(err instanceof TaskServiceError) || retry >= maxRetries) throw err;
        const delayMs = this.retryDelay(err, retry);
        if (delayMs === undefined) throw err;
        this.onRetry?.({ method: call.method, path: call.path, retry: retry + 1, delayMs, error: err });
        await sleep(delayMs, options.signal);
      }
    }
  }

  /** How long to wait before retrying after `err`, or undefined when it must not be retried. */
  private retryDelay(err: TaskServiceError, retry: number): number | undefined {
    const retryable =
      (err instanceof ConnectionError && err.code !== 'tls_error') ||
      (err.status !== undefined && RETRYABLE_STATUSES.has(err.status)) ||
      // the first attempt of this very call (same key) is still being processed
      err.code === 'idempotency_key_in_progress';
    if (!retryable) return undefined;
    if (err.retryAfterSeconds !== undefined) {
      const ms = err.retryAfterSeconds * 1000;
      return ms > this.retry.maxRetryAfterMs ? undefined : retryAfterDelay(ms, this.retry);
    }
    return backoffDelay(retry, this.retry);
  }

  private async attempt<T>(call: Call, timeoutMs: number, signal: AbortSignal | undefined): Promise<Answer<T>> {
    const url = new URL(this.baseUrl + call.path);
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': `tes-sdk/${SDK_VERSION} node/${process.version}`,
      ...this.extraHeaders,
      ...call.headers,
      Authorization: `Bearer ${this.apiKey}`,
    };
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    if (body !== undefined) headers['Content-Type'] = 'application/json';

    const timeout = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: HttpResponse;
    try {
      res = await this.transport.send({
        method: call.method,
        url: url.toString(),
        headers,
        ...(body === undefined ? {} : { body }),
        signal: combined,
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) {
        throw new ConnectionError({
          code: 'timeout',
          message: `${call.method} ${call.path}: no answer within ${timeoutMs} ms`,
          cause: err,
        });
      }
      if (isCertificateError(err)) {
        throw new ConnectionError({
          code: 'tls_error',
          message: `${call.method} ${call.path}: ${describe(err)} (a development certificate? pass insecure: true / --insecure, or trust it with ca / NODE_EXTRA_CA_CERTS)`,
          cause: err,
        });
      }
      throw new ConnectionError({ code: 'connection_error', message: `${call.method} ${call.path}: ${describe(err)}`, cause: err });
    }
    return { status: res.status, body: parseAnswer<T>(res, call), headers: res.headers };
  }
}

function parseAnswer<T>(res: HttpResponse, call: Call): T {
  const requestId = res.headers['x-request-id'];
  let json: unknown;
  let parsed = false;
  if (res.text !== '') {
    try {
      json = JSON.parse(res.text);
      parsed = true;
    } catch {
      parsed = false;
    }
  }
  if (res.status >= 200 && res.status < 300) {
    if (res.text === '') return undefined as T;
    if (parsed) return json as T;
    throw new TaskServiceError({
      code: 'invalid_response',
      status: res.status,
      requestId,
      headers: res.headers,
      message: `${call.method} ${call.path}: the answer is not JSON`,
    });
  }
  const envelope = parsed
    ? (json as { error?: { code?: unknown; message?: unknown; suggestion?: unknown; missing?: unknown } }).error
    : undefined;
  const code = typeof envelope?.code === 'string' ? envelope.code : `http_${res.status}`;
  const message =
    typeof envelope?.message === 'string'
      ? envelope.message
      : `${call.method} ${call.path} answered HTTP ${res.status}${res.text ? `: ${res.text.slice(0, 200)}` : ''}`;
  const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
  const ErrorClass = errorClassFor(res.status);
  return throwError(
    new ErrorClass({
      code,
      message,
      status: res.status,
      requestId,
      retryAfterSeconds: retryAfterMs === undefined ? undefined : retryAfterMs / 1000,
      headers: res.headers,
      suggestion: typeof envelope?.suggestion === 'string' ? envelope.suggestion : undefined,
      missing: Array.isArray(envelope?.missing) ? envelope.missing.filter((m): m is string => typeof m === 'string') : undefined,
    }),
  );
}

function throwError(err: TaskServiceError): never {
  throw err;
}

function segment(value: string): string {
  if (typeof value !== 'string' || value === '') throw new TypeError('an id must be a non-empty string');
  return encodeURIComponent(value);
}

/** Timers take at most 2^31-1 ms (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

function positive(n: number, name: string): number {
  if (!Number.isFinite(n) || n <= 0 || n > MAX_TIMER_MS)
    throw new TypeError(`${name} must be a number of milliseconds > 0 and <= ${MAX_TIMER_MS}`);
  return n;
}

function retries(n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new TypeError('maxRetries must be an integer >= 0');
  return n;
}

/** The server's certificate was refused: retrying cannot help. */
function isCertificateError(err: unknown): boolean {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|UNABLE_TO_GET_ISSUER/.test(code);
}

/** "fetch failed: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1" (duck-typed: errors may come from another realm). */
function describe(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; cause?: { message?: unknown; code?: unknown } } | null;
  if (typeof e !== 'object' || e === null) return String(err);
  const parts = [e.message, e.code ?? e.cause?.code, e.cause?.message].filter((p): p is string => typeof p === 'string' && p !== '');
  return parts.length > 0 ? [...new Set(parts)].join(': ') : String(err);
}
