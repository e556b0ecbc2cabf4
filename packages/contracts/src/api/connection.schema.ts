import { connectionViewSchema } from '../messages/vault.js';
import { storableString } from './storable.js';

/**
 * Users' connections (brief: revocation through the API). One connection is the
 * catalog's `connectionViewSchema`, the same object the oauth-vault answers with:
 * service, scopes, status, connected_at, never a token.
 */
export const connectionListSchema = {
  $id: 'ConnectionList',
  type: 'object',
  properties: {
    data: { type: 'array', items: connectionViewSchema },
    has_more: { type: 'boolean' },
  },
  required: ['data', 'has_more'],
  additionalProperties: false,
} as const;

/** Path parameters of /v1/users/:user_id/connections[/:service]. */
export const connectionPathSchema = {
  $id: 'ConnectionPath',
  type: 'object',
  properties: {
    user_id: { type: 'string', minLength: 1, maxLength: 256, ...storableString },
    service: { type: 'string', minLength: 1, maxLength: 256, ...storableString },
  },
  required: ['user_id'],
  additionalProperties: false,
} as const;

/** POST /v1/users/:user_id/settings_link: a signed, expiring link to the end user's settings page. */
export const settingsLinkSchema = {
  $id: 'SettingsLink',
  type: 'object',
  properties: {
    url: { type: 'string', format: 'uri' },
    expires_at: { type: 'string', format: 'date-time' },
  },
  required: ['url', 'expires_at'],
  additionalProperties: false,
} as const;
