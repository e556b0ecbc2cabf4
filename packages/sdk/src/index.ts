export { TaskServiceClient, DEFAULT_BASE_URL } from './client.js';
export type {
  ClientOptions,
  CreateTaskOptions,
  CreateTaskResult,
  IterateTasksParams,
  RequestOptions,
  RetryInfo,
  WaitForTaskOptions,
} from './client.js';
export type { Exact } from './fields.js';
export type { RetryOptions } from './retry.js';
export type { FetchLike, HttpAgentLike, CaCertificates } from './transport.js';
export {
  TaskServiceError,
  InvalidRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  ServerError,
  ConnectionError,
  WaitTimeoutError,
} from './errors.js';
export type { ApiErrorCode, ClientErrorCode, TaskServiceErrorCode } from './errors.js';
export * from './types.js';
export {
  verifyWebhook,
  verifyStandardWebhook,
  assertStandardWebhook,
  parseWebhook,
  computeSignature,
  computeStandardSignature,
  signWebhook,
  WebhookVerificationError,
  DEFAULT_TOLERANCE_SECONDS,
} from './webhooks/verify.js';
export type {
  RawBody,
  HeadersLike,
  WebhookSecret,
  WebhookErrorCode,
  StandardVerifyOptions,
  SignatureScheme,
  ParseWebhookOptions,
  SignedWebhookHeaders,
  SignWebhookOptions,
} from './webhooks/verify.js';
export { webhookMiddleware } from './webhooks/middleware.js';
export type {
  WebhookRequest,
  WebhookResponse,
  WebhookMiddlewareOptions,
  WebhookRejection,
  NextFunctionLike,
} from './webhooks/middleware.js';
export { startWebhookListener } from './webhooks/listener.js';
export type { WebhookListener, WebhookListenerOptions } from './webhooks/listener.js';
export { SDK_VERSION } from './version.js';
