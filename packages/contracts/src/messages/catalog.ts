import type { FromSchema } from 'json-schema-to-ts';
import { TASK_STATUSES, ENVIRONMENTS, taskErrorSchema, metadataSchema, plannerSchema } from '../api/task.schema.js';
import { progressDataSchema, waitingDataSchema } from '../api/webhook.schema.js';
import { HTTP_METHODS, TOOL_NAME_PATTERN, toolManifestSchema, toolViewSchema } from '../api/tool.schema.js';
import {
  webhookDeliveriesSchema,
  webhookGetSchema,
  webhookRedeliverSchema,
  webhookRotateSecretSchema,
  webhookSendTestSchema,
  webhookSetSchema,
  type WebhookDeliveries,
  type WebhookGet,
  type WebhookRedeliver,
  type WebhookRotateSecret,
  type WebhookSendTest,
  type WebhookSet,
} from './webhook-admin.js';

export * from './webhook-admin.js';

/**
 * Topology. Exchange and queue names are persistent: renaming one is a migration.
 * Commands go to one owner's queue through `tes.commands` (direct); events go to
 * `tes.events` (topic); rejected messages go through `tes.dead` to `<queue>.dead`.
 */
export const EXCHANGES = {
  commands: 'tes.commands',
  events: 'tes.events',
  dead: 'tes.dead',
} as const;

/**
 * Partitions of the per-account single-writer queues. Every publisher and consumer
 * must agree, so it is a constant: changing it is a migration.
 */
export const PARTITIONS = 8;

/** FNV-1a: stable across processes and languages. */
export function partitionOf(key: string, partitions = PARTITIONS): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}

const id = { type: 'string', minLength: 1, maxLength: 256 } as const;
const env = { type: 'string', enum: ENVIRONMENTS } as const;
const ts = { type: 'string', format: 'date-time' } as const;
const nullableString = { anyOf: [{ type: 'string' }, { type: 'null' }] } as const;

// ---- commands to the orchestrator (partitioned by account) ----

/** Which planner made a plan (recorded with the task, shown in its trace). */
export const plannerInfoSchema = plannerSchema;
export type PlannerInfoData = FromSchema<typeof plannerInfoSchema>;

/** A checked plan, made outside the partition (the LLM planner) and attached to the task.create it hands back. */
export const taskPlanSchema = {
  type: 'object',
  properties: {
    tool: id,
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: { tool: id, action: id, input: { type: 'object' } },
        required: ['tool', 'action', 'input'],
        additionalProperties: false,
      },
    },
    planner: plannerInfoSchema,
  },
  required: ['tool', 'steps', 'planner'],
  additionalProperties: false,
} as const;

export const taskCreateSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    environment: env,
    prompt: { type: 'string', minLength: 1 },
    user_id: nullableString,
    metadata: metadataSchema,
    mode: { type: 'string', enum: ['live', 'test'] },
    created_at: ts,
    concurrency_limit: { type: 'integer', minimum: 1 },
    /**
     * Set only by the orchestrator's planner consumer (task.plan): the plan the model made, which
     * the partition's writer records as it is. The gateway never sends one.
     */
    plan: taskPlanSchema,
  },
  required: ['task_id', 'account_id', 'environment', 'prompt', 'user_id', 'metadata', 'mode', 'created_at', 'concurrency_limit'],
  additionalProperties: false,
} as const;
export type TaskCreate = FromSchema<typeof taskCreateSchema>;

export const taskCancelSchema = {
  type: 'object',
  properties: { task_id: id, account_id: id, environment: env },
  required: ['task_id', 'account_id', 'environment'],
  additionalProperties: false,
} as const;
export type TaskCancel = FromSchema<typeof taskCancelSchema>;

/**
 * Asks the partition's single writer to look at a task again (relay its outbox,
 * re-dispatch a stalled step). Sweepers send this instead of writing themselves.
 */
export const taskReconcileSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    reason: { type: 'string' },
    /** The task version the sender saw: a task changed since is not re-dispatched. */
    version: { type: 'integer', minimum: 0 },
  },
  required: ['task_id', 'account_id', 'reason'],
  additionalProperties: false,
} as const;
export type TaskReconcile = FromSchema<typeof taskReconcileSchema>;

/**
 * Answer to task.create and task.cancel: the task view or an API error code. A refused create
 * (no_matching_tool, missing_input, unsupported_request) says what would make the request clear
 * (`suggestion`) and, for missing_input, what is missing.
 */
export const taskReplySchema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    task: { type: 'object' },
    version: { type: 'integer' },
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        suggestion: { type: 'string' },
        missing: { type: 'array', items: { type: 'string' } },
      },
      required: ['code', 'message'],
    },
  },
  required: ['ok'],
} as const;
export type TaskReply = FromSchema<typeof taskReplySchema>;

// ---- executor ----

export const stepRunSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    environment: env,
    user_id: nullableString,
    step_index: { type: 'integer', minimum: 0 },
    step_count: { type: 'integer', minimum: 1 },
    tool: id,
    action: id,
    input: { type: 'object' },
    /** Stable across redeliveries: task id + step index. */
    idempotency_key: id,
    timeout_ms: { type: 'integer', minimum: 1 },
    /** A custom tool's action, as registered when the task was planned (the executor has no tool store). */
    custom: {
      type: 'object',
      properties: {
        base_url: { type: 'string' },
        method: { type: 'string', enum: HTTP_METHODS },
        path: { type: 'string' },
        input_schema: { type: 'object' },
        /** The tool's OAuth service (its name), or null: no user authorization. */
        service: nullableString,
        scopes: { type: 'array', items: { type: 'string' } },
      },
      required: ['base_url', 'method', 'path', 'input_schema', 'service', 'scopes'],
      additionalProperties: false,
    },
  },
  required: [
    'task_id',
    'account_id',
    'environment',
    'user_id',
    'step_index',
    'step_count',
    'tool',
    'action',
    'input',
    'idempotency_key',
    'timeout_ms',
  ],
  additionalProperties: false,
} as const;
export type StepRun = FromSchema<typeof stepRunSchema>;

export const stepResultSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    environment: env,
    step_index: { type: 'integer', minimum: 0 },
    outcome: { type: 'string', enum: ['complete', 'failed', 'needs_authorization'] },
    output: { type: 'object' },
    error: taskErrorSchema,
    authorization: waitingDataSchema,
    duration_ms: { type: 'integer', minimum: 0 },
    note: { type: 'string' },
  },
  required: ['task_id', 'account_id', 'environment', 'step_index', 'outcome', 'duration_ms'],
  additionalProperties: false,
} as const;
export type StepResult = FromSchema<typeof stepResultSchema>;

/** Gateway → executor, request/reply: the trace of one task (spec 2.3). */
export const traceGetSchema = {
  type: 'object',
  properties: { task_id: id, account_id: id, environment: env },
  required: ['task_id', 'account_id', 'environment'],
  additionalProperties: false,
} as const;
export type TraceGet = FromSchema<typeof traceGetSchema>;

// ---- oauth-vault ----

/** Executor → vault, request/reply: a usable access token for a user's service, or why not. */
export const credentialGetSchema = {
  type: 'object',
  properties: {
    account_id: id,
    environment: env,
    user_id: id,
    service: id,
    scopes: { type: 'array', items: { type: 'string' }, maxItems: 100 },
    task_id: id,
    /** The provider rejected the last token: refresh once before answering. */
    force_refresh: { type: 'boolean' },
  },
  required: ['account_id', 'environment', 'user_id', 'service', 'scopes', 'task_id'],
  additionalProperties: false,
} as const;
export type CredentialGet = FromSchema<typeof credentialGetSchema>;

/** The vault's answer. Only this internal reply ever carries a raw token. */
export const credentialReplySchema = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'authorization_required', 'expired', 'error'] },
    access_token: { type: 'string' },
    expires_at: { type: 'string' },
    auth_url: { type: 'string' },
    message: { type: 'string' },
  },
  required: ['status'],
} as const;
export type CredentialReply = FromSchema<typeof credentialReplySchema>;

/** Vault → orchestrator partition: a user's consent flow for a service ended. */
export const connectionChangedSchema = {
  type: 'object',
  properties: {
    account_id: id,
    environment: env,
    user_id: id,
    service: id,
    outcome: { type: 'string', enum: ['authorized', 'denied', 'revoked'] },
    scopes: { type: 'array', items: { type: 'string' } },
  },
  required: ['account_id', 'environment', 'user_id', 'service', 'outcome'],
  additionalProperties: false,
} as const;
export type ConnectionChanged = FromSchema<typeof connectionChangedSchema>;

/** Gateway → vault, request/reply: a user's connections (never a token). */
export const connectionsListSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, user_id: id },
  required: ['account_id', 'environment', 'user_id'],
  additionalProperties: false,
} as const;
export type ConnectionsList = FromSchema<typeof connectionsListSchema>;

/** Gateway → vault, request/reply: revoke one service's connection of a user. */
export const connectionRevokeSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, user_id: id, service: id },
  required: ['account_id', 'environment', 'user_id', 'service'],
  additionalProperties: false,
} as const;
export type ConnectionRevoke = FromSchema<typeof connectionRevokeSchema>;

/** Gateway → vault, request/reply: a signed, expiring link to the end user's settings page. */
export const settingsLinkCreateSchema = {
  type: 'object',
  properties: {
    account_id: id,
    environment: env,
    user_id: id,
    ttl_seconds: { type: 'integer', minimum: 60, maximum: 86400 },
  },
  required: ['account_id', 'environment', 'user_id'],
  additionalProperties: false,
} as const;
export type SettingsLinkCreate = FromSchema<typeof settingsLinkCreateSchema>;

/**
 * Gateway → vault, request/reply: a fresh consent link for the one a waiting task carries
 * (consent links expire within minutes and work once). Answers {ok: true, auth_url, expires_at}
 * or {ok: false, error: {code: 'not_found'}} when the authorization it stands for is gone.
 */
export const consentLinkRenewSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, auth_url: { type: 'string', maxLength: 4096 } },
  required: ['account_id', 'environment', 'auth_url'],
  additionalProperties: false,
} as const;
export type ConsentLinkRenew = FromSchema<typeof consentLinkRenewSchema>;

/** One connection as the public API shows it. */
export const connectionViewSchema = {
  $id: 'Connection',
  type: 'object',
  properties: {
    service: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    status: { type: 'string', enum: ['connected', 'broken', 'revoked'] },
    connected_at: ts,
  },
  required: ['service', 'scopes', 'status', 'connected_at'],
  additionalProperties: false,
} as const;
export type ConnectionView = FromSchema<typeof connectionViewSchema>;

// ---- custom tools (gateway → orchestrator partition for the tool, → vault for its OAuth client) ----

/** Creates or replaces a tool of the account's environment. Reply: {ok, created, tool} or {ok: false, error}. */
export const toolRegisterSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, tool: toolViewSchema },
  required: ['account_id', 'environment', 'tool'],
  additionalProperties: false,
} as const;
export type ToolRegister = FromSchema<typeof toolRegisterSchema>;

/** Reply: {ok, tools}. */
export const toolListRequestSchema = {
  type: 'object',
  properties: { account_id: id, environment: env },
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type ToolListRequest = FromSchema<typeof toolListRequestSchema>;

/** Reply: {ok} or {ok: false, error: {code: 'not_found'}}. */
export const toolDeleteSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, name: { type: 'string', pattern: TOOL_NAME_PATTERN } },
  required: ['account_id', 'environment', 'name'],
  additionalProperties: false,
} as const;
export type ToolDelete = FromSchema<typeof toolDeleteSchema>;

/** A custom tool's OAuth client, kept by the vault (the secret encrypted). Reply: {ok}. */
export const providerRegisterSchema = {
  type: 'object',
  properties: {
    account_id: id,
    environment: env,
    service: { type: 'string', pattern: TOOL_NAME_PATTERN },
    display_name: { type: 'string' },
    ...toolManifestSchema.properties.oauth.properties,
  },
  required: ['account_id', 'environment', 'service', 'display_name', 'authorize_url', 'token_url', 'client_id', 'client_secret'],
  additionalProperties: false,
} as const;
export type ProviderRegister = FromSchema<typeof providerRegisterSchema>;

/** Forgets a custom tool's OAuth client and the users' connections to it. Reply: {ok}. */
export const providerDeleteSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, service: { type: 'string', pattern: TOOL_NAME_PATTERN } },
  required: ['account_id', 'environment', 'service'],
  additionalProperties: false,
} as const;
export type ProviderDelete = FromSchema<typeof providerDeleteSchema>;

// ---- task events (orchestrator → everyone) ----

export const TASK_EVENT_KINDS = ['created', 'started', 'progress', 'waiting', 'resumed', 'completed', 'failed', 'cancelled'] as const;
export type TaskEventKind = (typeof TASK_EVENT_KINDS)[number];

/** A snapshot of the task after the change plus what changed; `version` orders them per task. */
export const taskEventSchema = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: TASK_EVENT_KINDS },
    version: { type: 'integer', minimum: 1 },
    task: {
      type: 'object',
      properties: {
        id,
        account_id: id,
        environment: env,
        user_id: nullableString,
        status: { type: 'string', enum: TASK_STATUSES },
        tool: { type: 'string' },
        metadata: { type: 'object' },
        created_at: ts,
        completed_at: ts,
        failed_at: ts,
        cancelled_at: ts,
        result: { type: 'object' },
        error: taskErrorSchema,
        /** Which planner made the task's plan (absent for a task stored before it was recorded). */
        planner: plannerInfoSchema,
      },
      required: ['id', 'account_id', 'environment', 'user_id', 'status', 'tool', 'metadata', 'created_at'],
      additionalProperties: false,
    },
    progress: progressDataSchema,
    waiting: waitingDataSchema,
  },
  required: ['kind', 'version', 'task'],
  additionalProperties: false,
  // What each public webhook needs is present: the dispatcher can always render it.
  allOf: [
    { if: { properties: { kind: { const: 'completed' } } }, then: { properties: { task: { required: ['result', 'completed_at'] } } } },
    { if: { properties: { kind: { const: 'failed' } } }, then: { properties: { task: { required: ['error', 'failed_at'] } } } },
    { if: { properties: { kind: { const: 'progress' } } }, then: { required: ['progress'] } },
    { if: { properties: { kind: { const: 'waiting' } } }, then: { required: ['waiting'] } },
  ],
} as const;
/** Versions of one task's events are 1, 2, 3, … without gaps: consumers may wait for a missing one. */
export type TaskEvent = FromSchema<typeof taskEventSchema>;

// ---- webhook configuration (a dispatcher replica or the operator CLI → every dispatcher replica) ----

/**
 * An account environment's webhook endpoint or signing secret changed: every dispatcher replica
 * drops its cached copy at once (published after the change is stored).
 */
export const webhookConfigChangedSchema = {
  type: 'object',
  properties: { account_id: id, environment: env },
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type WebhookConfigChanged = FromSchema<typeof webhookConfigChangedSchema>;

/** An account or one of its API keys changed (key revoked, account disabled or enabled, limits set): gateways drop what they cached of it. */
export const gatewayCredentialsChangedSchema = {
  type: 'object',
  properties: { account_id: id },
  required: ['account_id'],
  additionalProperties: false,
} as const;
export type GatewayCredentialsChanged = FromSchema<typeof gatewayCredentialsChangedSchema>;

// ---- the catalog ----

export interface MessageRoute {
  exchange: string;
  /** Fixed routing key, or a base that gets `.p<partition>` appended. */
  routingKey: string;
  partitioned: boolean;
  schema: object;
}

export const CATALOG = {
  'task.create': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: taskCreateSchema },
  'task.cancel': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: taskCancelSchema },
  'step.result': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: stepResultSchema },
  'task.reconcile': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: taskReconcileSchema },
  /** A create handed on by its partition to be planned by the model, by any orchestrator replica (request/reply kept). */
  'task.plan': { exchange: EXCHANGES.commands, routingKey: 'orchestrator.planner', partitioned: false, schema: taskCreateSchema },
  'step.run': { exchange: EXCHANGES.commands, routingKey: 'executor.steps', partitioned: false, schema: stepRunSchema },
  'trace.get': { exchange: EXCHANGES.commands, routingKey: 'executor.queries', partitioned: false, schema: traceGetSchema },
  'credential.get': { exchange: EXCHANGES.commands, routingKey: 'vault.requests', partitioned: false, schema: credentialGetSchema },
  'connection.changed': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: connectionChangedSchema },
  'connections.list': { exchange: EXCHANGES.commands, routingKey: 'vault.requests', partitioned: false, schema: connectionsListSchema },
  'connection.revoke': { exchange: EXCHANGES.commands, routingKey: 'vault.requests', partitioned: false, schema: connectionRevokeSchema },
  'settings_link.create': {
    exchange: EXCHANGES.commands,
    routingKey: 'vault.requests',
    partitioned: false,
    schema: settingsLinkCreateSchema,
  },
  'consent_link.renew': {
    exchange: EXCHANGES.commands,
    routingKey: 'vault.requests',
    partitioned: false,
    schema: consentLinkRenewSchema,
  },
  'tool.register': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: toolRegisterSchema },
  'tool.list': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: toolListRequestSchema },
  'tool.delete': { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true, schema: toolDeleteSchema },
  'provider.register': { exchange: EXCHANGES.commands, routingKey: 'vault.requests', partitioned: false, schema: providerRegisterSchema },
  'provider.delete': { exchange: EXCHANGES.commands, routingKey: 'vault.requests', partitioned: false, schema: providerDeleteSchema },
  'task.event': { exchange: EXCHANGES.events, routingKey: 'task.event', partitioned: true, schema: taskEventSchema },
  'webhook.get': { exchange: EXCHANGES.commands, routingKey: 'dispatcher.admin', partitioned: false, schema: webhookGetSchema },
  'webhook.set': { exchange: EXCHANGES.commands, routingKey: 'dispatcher.admin', partitioned: false, schema: webhookSetSchema },
  'webhook.rotate_secret': {
    exchange: EXCHANGES.commands,
    routingKey: 'dispatcher.admin',
    partitioned: false,
    schema: webhookRotateSecretSchema,
  },
  'webhook.send_test': { exchange: EXCHANGES.commands, routingKey: 'dispatcher.admin', partitioned: false, schema: webhookSendTestSchema },
  'webhook.deliveries': {
    exchange: EXCHANGES.commands,
    routingKey: 'dispatcher.admin',
    partitioned: false,
    schema: webhookDeliveriesSchema,
  },
  'webhook.redeliver': { exchange: EXCHANGES.commands, routingKey: 'dispatcher.admin', partitioned: false, schema: webhookRedeliverSchema },
  'webhook.config_changed': {
    exchange: EXCHANGES.events,
    routingKey: 'webhook.config_changed',
    partitioned: false,
    schema: webhookConfigChangedSchema,
  },
  'gateway.credentials_changed': {
    exchange: EXCHANGES.events,
    routingKey: 'gateway.credentials_changed',
    partitioned: false,
    schema: gatewayCredentialsChangedSchema,
  },
} as const satisfies Record<string, MessageRoute>;

export type MessageType = keyof typeof CATALOG;

export interface MessageDataMap {
  'task.create': TaskCreate;
  'task.cancel': TaskCancel;
  'step.result': StepResult;
  'task.reconcile': TaskReconcile;
  'task.plan': TaskCreate;
  'step.run': StepRun;
  'trace.get': TraceGet;
  'credential.get': CredentialGet;
  'connection.changed': ConnectionChanged;
  'connections.list': ConnectionsList;
  'connection.revoke': ConnectionRevoke;
  'settings_link.create': SettingsLinkCreate;
  'consent_link.renew': ConsentLinkRenew;
  'tool.register': ToolRegister;
  'tool.list': ToolListRequest;
  'tool.delete': ToolDelete;
  'provider.register': ProviderRegister;
  'provider.delete': ProviderDelete;
  'task.event': TaskEvent;
  'webhook.get': WebhookGet;
  'webhook.set': WebhookSet;
  'webhook.rotate_secret': WebhookRotateSecret;
  'webhook.send_test': WebhookSendTest;
  'webhook.deliveries': WebhookDeliveries;
  'webhook.redeliver': WebhookRedeliver;
  'webhook.config_changed': WebhookConfigChanged;
  'gateway.credentials_changed': GatewayCredentialsChanged;
}

/** Routing key of one message; partitioned routes need the partition key (the account id). */
export function routingKeyFor(type: MessageType, partitionKey?: string): string {
  const route: MessageRoute = CATALOG[type];
  if (!route.partitioned) return route.routingKey;
  if (partitionKey === undefined) throw new Error(`message ${type} needs a partition key`);
  return `${route.routingKey}.p${partitionOf(partitionKey)}`;
}

/** Queues each owner consumes, with what binds to them. */
export const QUEUES = {
  orchestratorPartition: (p: number) => ({ name: `orchestrator.p${p}`, exchange: EXCHANGES.commands, bindings: [`orchestrator.p${p}`] }),
  /**
   * Creates waiting for the LLM planner: not partitioned, consumed by every orchestrator replica
   * (competing consumers), so no partition's writer waits for a model.
   */
  orchestratorPlanner: { name: 'orchestrator.planner', exchange: EXCHANGES.commands, bindings: ['orchestrator.planner'] },
  gatewayTaskEvents: (p: number) => ({ name: `gateway.task-events.p${p}`, exchange: EXCHANGES.events, bindings: [`task.event.p${p}`] }),
  executorSteps: { name: 'executor.steps', exchange: EXCHANGES.commands, bindings: ['executor.steps'] },
  executorQueries: { name: 'executor.queries', exchange: EXCHANGES.commands, bindings: ['executor.queries'] },
  vaultRequests: { name: 'vault.requests', exchange: EXCHANGES.commands, bindings: ['vault.requests'] },
  dispatcherTaskEvents: { name: 'dispatcher.task-events', exchange: EXCHANGES.events, bindings: ['task.event.#'] },
  dispatcherAdmin: { name: 'dispatcher.admin', exchange: EXCHANGES.commands, bindings: ['dispatcher.admin'] },
  /** Each dispatcher replica's own queue (exclusive: gone with its connection) of webhook.config_changed. */
  dispatcherConfigChanges: (replica: string) => ({
    name: `dispatcher.config-changes.${replica}`,
    exchange: EXCHANGES.events,
    bindings: ['webhook.config_changed'],
    exclusive: true,
  }),
  /** Each gateway replica's own queue (exclusive: gone with its connection) of gateway.credentials_changed. */
  gatewayCredentialChanges: (replica: string) => ({
    name: `gateway.credential-changes.${replica}`,
    exchange: EXCHANGES.events,
    bindings: ['gateway.credentials_changed'],
    exclusive: true,
  }),
} as const;
