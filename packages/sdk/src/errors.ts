/**
 * Every failure of a client call is a `TaskServiceError` (or a subclass). API errors carry the
 * HTTP status, the spec's `code` (section 7.2 plus the documented additions) and the
 * `X-Request-Id` of the answer; failures without an answer (network, timeout) have no status.
 * A call cancelled through its AbortSignal rejects with the signal's reason instead.
 */
import type { Task } from './types.js';

/** Codes the API answers with (spec 7.2 and docs/decisions.md). */
export type ApiErrorCode =
  | 'invalid_request'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'account_disabled'
  | 'https_required'
  | 'task_not_found'
  | 'connection_not_found'
  | 'not_found'
  | 'method_not_allowed'
  | 'task_already_complete'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_progress'
  | 'request_too_large'
  | 'prompt_too_long'
  | 'no_matching_tool'
  | 'missing_input'
  | 'unsupported_request'
  | 'rate_limit_exceeded'
  | 'internal_error'
  | 'temporarily_unavailable';

/** Codes of failures the SDK detects itself. */
export type ClientErrorCode =
  /** The connection failed or broke before an answer arrived. */
  | 'connection_error'
  /** The server's TLS certificate was not trusted (not retried). */
  | 'tls_error'
  /** No answer within `timeoutMs`. */
  | 'timeout'
  /** An answer that is not the API's JSON (a proxy's HTML page, ...). */
  | 'invalid_response'
  /** `waitForTask` gave up before the task ended. */
  | 'wait_timeout';

// `string & {}` keeps autocompletion of the known codes while accepting codes added later.
export type TaskServiceErrorCode = ApiErrorCode | ClientErrorCode | (string & {});

export interface TaskServiceErrorInit {
  message: string;
  code: TaskServiceErrorCode;
  /** HTTP status; undefined when no answer arrived. */
  status?: number | undefined;
  requestId?: string | undefined;
  /** Seconds from the answer's Retry-After header. */
  retryAfterSeconds?: number | undefined;
  headers?: Record<string, string> | undefined;
  /** What would make the request work (refused creates: no_matching_tool, missing_input, unsupported_request). */
  suggestion?: string | undefined;
  /** missing_input: the required inputs the request lacks. */
  missing?: string[] | undefined;
  cause?: unknown;
}

export class TaskServiceError extends Error {
  readonly code: TaskServiceErrorCode;
  readonly status: number | undefined;
  /** `X-Request-Id` of the answer: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  /** Response headers (lower-case names); empty when no answer arrived. */
  readonly headers: Readonly<Record<string, string>>;
  /** The API's suggestion of what to change ("Name the channel, e.g. #eng"), when it gave one. */
  readonly suggestion: string | undefined;
  /** missing_input: what the request lacks, e.g. "step 1 (gmail.send_email): subject". */
  readonly missing: readonly string[] | undefined;

  constructor(init: TaskServiceErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.headers = init.headers ?? {};
    this.suggestion = init.suggestion;
    this.missing = init.missing;
  }

  /** The spec's envelope (with the suggestion and what is missing), plus status and request id when known (what the CLI prints). */
  toJSON(): {
    error: { code: string; message: string; suggestion?: string; missing?: string[]; status?: number; request_id?: string };
  } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.suggestion === undefined ? {} : { suggestion: this.suggestion }),
        ...(this.missing === undefined ? {} : { missing: [...this.missing] }),
        ...(this.status === undefined ? {} : { status: this.status }),
        ...(this.requestId === undefined ? {} : { request_id: this.requestId }),
      },
    };
  }
}

/** 400, 413, 422: the request itself is wrong (invalid_request, prompt_too_long, no_matching_tool, missing_input, unsupported_request, ...). */
export class InvalidRequestError extends TaskServiceError {}
/** 401: missing_api_key or invalid_api_key. Also thrown by the constructor when no key is configured. */
export class AuthenticationError extends TaskServiceError {}
/** 403: account_disabled, https_required. */
export class PermissionDeniedError extends TaskServiceError {}
/** 404: task_not_found, connection_not_found, not_found. */
export class NotFoundError extends TaskServiceError {}
/** 409: task_already_complete, idempotency_key_reused, idempotency_key_in_progress. */
export class ConflictError extends TaskServiceError {}
/** 429 rate_limit_exceeded; `retryAfterSeconds` says when to come back. */
export class RateLimitError extends TaskServiceError {}
/** 5xx: internal_error, temporarily_unavailable. */
export class ServerError extends TaskServiceError {}
/** No answer: connection_error, timeout or tls_error. */
export class ConnectionError extends TaskServiceError {}
/** `waitForTask` ran out of time; `task` is the last state seen (if any). */
export class WaitTimeoutError extends TaskServiceError {
  constructor(
    message: string,
    readonly task: Task | undefined,
  ) {
    super({ message, code: 'wait_timeout' });
  }
}

/** The subclass for an HTTP status. */
export function errorClassFor(status: number): typeof TaskServiceError {
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionDeniedError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  if (status >= 400) return InvalidRequestError;
  return TaskServiceError;
}
