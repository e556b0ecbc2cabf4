import type { FromSchema } from 'json-schema-to-ts';
import { MANIFEST_MAX_STRING, STORABLE_MAX_DEPTH } from './storable.js';

/**
 * Custom tools (brief: an account registers a custom HTTP tool from a JSON manifest).
 * A tool belongs to one account and one environment (test keys and live keys see separate
 * tools). Its name is also its OAuth service name, so it must not be a built-in one.
 */

export const TOOL_NAME_PATTERN = '^[a-z][a-z0-9_]{2,39}$';
export const ACTION_NAME_PATTERN = '^[a-z][a-z0-9_]{0,39}$';
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const httpUrl = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 } as const;
const words = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 40 }, maxItems: 30 } as const;
const scopes = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, maxItems: 50 } as const;

export const toolActionSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', pattern: ACTION_NAME_PATTERN },
    description: { type: 'string', minLength: 1, maxLength: 500 },
    method: { type: 'string', enum: HTTP_METHODS },
    /** Appended to base_url; `{field}` is replaced by that input field (URL-encoded). */
    path: { type: 'string', pattern: '^/', maxLength: 500 },
    /** A JSON Schema of type object; compiled by ajv at registration. Stored as given: no `$` keywords (`$ref`, `$defs`). */
    input_schema: { type: 'object' },
    /** Default: read for GET, destructive for DELETE, write otherwise. */
    side_effect: { type: 'string', enum: ['read', 'write', 'destructive'] },
    /** Scopes this action needs beyond the tool's oauth.scopes. */
    scopes,
    /** Words that make the planner pick this action (verbs mostly). */
    keywords: words,
  },
  required: ['name', 'description', 'method', 'path', 'input_schema'],
  additionalProperties: false,
} as const;
export type ToolAction = FromSchema<typeof toolActionSchema>;

const oauthProperties = {
  authorize_url: httpUrl,
  token_url: httpUrl,
  revocation_url: httpUrl,
  scopes,
  client_id: { type: 'string', minLength: 1, maxLength: 500 },
  pkce: { type: 'boolean' },
  /** Client authentication at the token endpoint. */
  token_auth: { type: 'string', enum: ['basic', 'post'] },
} as const;

/**
 * POST /v1/tools: the manifest. `x-storable` (api/storable.ts) holds all of it to what the
 * database stores: no NUL, no key starting with `$` or holding `.` (so input schemas without
 * `$ref`/`$defs`), nesting and strings bounded.
 */
export const toolManifestSchema = {
  $id: 'ToolManifest',
  type: 'object',
  'x-storable': { max_depth: STORABLE_MAX_DEPTH, max_string_length: MANIFEST_MAX_STRING },
  properties: {
    name: { type: 'string', pattern: TOOL_NAME_PATTERN },
    description: { type: 'string', minLength: 1, maxLength: 1000 },
    /** Words that make the planner pick this tool (nouns mostly); the words of the name always count. */
    keywords: words,
    base_url: httpUrl,
    actions: { type: 'array', items: toolActionSchema, minItems: 1, maxItems: 30 },
    /** The tool acts on behalf of a user through its own OAuth 2.0 provider; absent: no user authorization. */
    oauth: {
      type: 'object',
      properties: { ...oauthProperties, client_secret: { type: 'string', minLength: 1, maxLength: 2000 } },
      required: ['authorize_url', 'token_url', 'client_id', 'client_secret'],
      additionalProperties: false,
    },
  },
  required: ['name', 'description', 'base_url', 'actions'],
  additionalProperties: false,
} as const;
export type ToolManifest = FromSchema<typeof toolManifestSchema>;

/** A registered tool as the API shows it and as the orchestrator stores it: never the client secret. */
export const toolViewSchema = {
  $id: 'Tool',
  type: 'object',
  properties: {
    name: toolManifestSchema.properties.name,
    description: toolManifestSchema.properties.description,
    keywords: words,
    base_url: httpUrl,
    actions: toolManifestSchema.properties.actions,
    oauth: {
      type: 'object',
      properties: oauthProperties,
      required: ['authorize_url', 'token_url', 'client_id'],
      additionalProperties: false,
    },
    created_at: { type: 'string', format: 'date-time' },
  },
  required: ['name', 'description', 'base_url', 'actions', 'created_at'],
  additionalProperties: false,
} as const;
export type ToolView = FromSchema<typeof toolViewSchema>;

export const toolListSchema = {
  $id: 'ToolList',
  type: 'object',
  properties: { data: { type: 'array', items: toolViewSchema }, has_more: { type: 'boolean' } },
  required: ['data', 'has_more'],
  additionalProperties: false,
} as const;

/** Path parameter of /v1/tools/:name. */
export const toolPathSchema = {
  $id: 'ToolPath',
  type: 'object',
  properties: { name: { type: 'string', pattern: TOOL_NAME_PATTERN } },
  required: ['name'],
  additionalProperties: false,
} as const;

/** The side-effect class of an action: declared, else from its method. */
export function sideEffectOfAction(a: Pick<ToolAction, 'method' | 'side_effect'>): 'read' | 'write' | 'destructive' {
  return a.side_effect ?? (a.method === 'GET' ? 'read' : a.method === 'DELETE' ? 'destructive' : 'write');
}
