/**
 * The one closed error taxonomy. Domain code throws codes, never HTTP statuses;
 * `httpStatusOf` is the single mapping to HTTP.
 */
export const API_ERROR_STATUS = {
  invalid_request: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  account_disabled: 403,
  https_required: 403,
  task_not_found: 404,
  connection_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  task_already_complete: 409,
  idempotency_key_reused: 409,
  idempotency_key_in_progress: 409,
  request_too_large: 413,
  prompt_too_long: 422,
  no_matching_tool: 422,
  missing_input: 422,
  unsupported_request: 422,
  rate_limit_exceeded: 429,
  internal_error: 500,
  temporarily_unavailable: 503,
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

/** Codes a task can fail with (spec 7.4), plus the planner's own. */
export const TASK_FAILURE_CODES = [
  'auth_token_expired',
  'service_unavailable',
  'rate_limited',
  'invalid_credentials',
  'permission_denied',
  'workflow_depth_exceeded',
  'no_matching_tool',
  'step_failed',
  'step_timeout',
] as const;

export type TaskFailureCode = (typeof TASK_FAILURE_CODES)[number];

export interface AppErrorOptions {
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
  /** What the caller can do about it, in their terms ("add a subject"). */
  suggestion?: string | undefined;
  /** missing_input: the required inputs the request lacks. */
  missing?: string[] | undefined;
}

export class AppError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly suggestion: string | undefined;
  readonly missing: string[] | undefined;

  constructor(code: ApiErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = API_ERROR_STATUS[code];
    this.headers = options.headers ?? {};
    this.suggestion = options.suggestion;
    this.missing = options.missing;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

export function isApiErrorCode(code: unknown): code is ApiErrorCode {
  return typeof code === 'string' && Object.hasOwn(API_ERROR_STATUS, code);
}

export function httpStatusOf(code: ApiErrorCode): number {
  return API_ERROR_STATUS[code];
}

/** The spec's envelope (7.1), with a suggestion (and what is missing) when the service knows one. */
export interface ErrorEnvelope {
  error: { code: string; message: string; suggestion?: string; missing?: string[] };
}

export function toEnvelope(err: AppError): ErrorEnvelope {
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.suggestion ? { suggestion: err.suggestion } : {}),
      ...(err.missing?.length ? { missing: err.missing } : {}),
    },
  };
}
export { isDatabaseUnavailable } from './database-unavailable.js';
