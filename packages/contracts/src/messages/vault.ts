import type { FromSchema } from 'json-schema-to-ts';
import { TOOL_NAME_PATTERN, toolManifestSchema } from '../api/tool.schema.js';
import { acceptedOrRefused, doneReplySchema, env, id, ts } from './fields.js';
import { EXCHANGES, type MessageDefinition } from './topology.js';

/**
 * Requests to the oauth-vault (queue `vault.requests`). Every reply but credential.get's is
 * `{ok: true, ...}` or a refusal `{ok: false, error: {code, message}}` (`temporarily_unavailable`
 * when the vault could not answer).
 */

/** Executor → vault: a usable access token for a user's service, or why not. */
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

/** Gateway → vault: a user's connections (never a token). */
export const connectionsListSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, user_id: id },
  required: ['account_id', 'environment', 'user_id'],
  additionalProperties: false,
} as const;
export type ConnectionsList = FromSchema<typeof connectionsListSchema>;

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

export const connectionsListReplySchema = acceptedOrRefused({ connections: { type: 'array', items: connectionViewSchema } }, [
  'connections',
]);
export type ConnectionsListReply = FromSchema<typeof connectionsListReplySchema>;

/** Gateway → vault: revoke one service's connection of a user. Refused with `connection_not_found`. */
export const connectionRevokeSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, user_id: id, service: id },
  required: ['account_id', 'environment', 'user_id', 'service'],
  additionalProperties: false,
} as const;
export type ConnectionRevoke = FromSchema<typeof connectionRevokeSchema>;

/** Gateway → vault: a signed, expiring link to the end user's settings page. */
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

export const settingsLinkReplySchema = acceptedOrRefused({ url: { type: 'string' }, expires_at: ts }, ['url', 'expires_at']);
export type SettingsLinkReply = FromSchema<typeof settingsLinkReplySchema>;

/**
 * Gateway → vault: a fresh consent link for the one a waiting task carries (consent links expire
 * within minutes and work once). Refused with `not_found` when the authorization it stands for is gone.
 */
export const consentLinkRenewSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, auth_url: { type: 'string', maxLength: 4096 } },
  required: ['account_id', 'environment', 'auth_url'],
  additionalProperties: false,
} as const;
export type ConsentLinkRenew = FromSchema<typeof consentLinkRenewSchema>;

export const consentLinkReplySchema = acceptedOrRefused({ auth_url: { type: 'string' }, expires_at: ts }, ['auth_url', 'expires_at']);
export type ConsentLinkReply = FromSchema<typeof consentLinkReplySchema>;

/** A custom tool's OAuth client, kept by the vault (the secret encrypted). */
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

/** Forgets a custom tool's OAuth client and the users' connections to it (idempotent). */
export const providerDeleteSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, service: { type: 'string', pattern: TOOL_NAME_PATTERN } },
  required: ['account_id', 'environment', 'service'],
  additionalProperties: false,
} as const;
export type ProviderDelete = FromSchema<typeof providerDeleteSchema>;

const vault = { exchange: EXCHANGES.commands, routingKey: 'vault.requests', partitioned: false } as const;

export const VAULT_MESSAGES = {
  'credential.get': { ...vault, schema: credentialGetSchema, reply: credentialReplySchema },
  'connections.list': { ...vault, schema: connectionsListSchema, reply: connectionsListReplySchema },
  'connection.revoke': { ...vault, schema: connectionRevokeSchema, reply: doneReplySchema },
  'settings_link.create': { ...vault, schema: settingsLinkCreateSchema, reply: settingsLinkReplySchema },
  'consent_link.renew': { ...vault, schema: consentLinkRenewSchema, reply: consentLinkReplySchema },
  'provider.register': { ...vault, schema: providerRegisterSchema, reply: doneReplySchema },
  'provider.delete': { ...vault, schema: providerDeleteSchema, reply: doneReplySchema },
} as const satisfies Record<string, MessageDefinition>;
