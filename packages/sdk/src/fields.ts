/**
 * Unknown fields are refused before any request, as the API refuses them (`400 priority is not an
 * allowed field`): otherwise a field the SDK does not send would vanish without a word.
 * TypeScript callers get a compile error ({@link Exact}), JavaScript callers an
 * InvalidRequestError from the call.
 */
import { InvalidRequestError } from './errors.js';
import type { CreateTaskParams, ListTasksParams, ToolAction, ToolManifest, ToolOAuth } from './types.js';

/**
 * What the caller passed (`P`), with every key the API type (`T`) does not name turned into
 * `never`, at any depth: an unknown field is then a compile error even in a variable, where
 * TypeScript's own excess-property check (object literals only) does not look. Open records
 * (`metadata`, `input_schema`) take any key.
 */
export type Exact<T, P> = string extends keyof T
  ? P
  : P extends readonly (infer E)[]
    ? T extends readonly (infer TE)[]
      ? readonly Exact<TE, E>[]
      : P
    : P extends object
      ? { [K in keyof P]: K extends keyof T ? Exact<NonNullable<T[K]>, P[K]> : never }
      : P;

type Fields<T> = Readonly<Record<keyof T, true>>;

// Every field of each body, no more (the Record type refuses a missing or an extra name);
// types.compat.test.ts keeps them equal to the API's schemas.
export const CREATE_TASK_FIELDS: Fields<CreateTaskParams> = { prompt: true, user_id: true, metadata: true, mode: true };
export const LIST_TASKS_FIELDS: Fields<ListTasksParams> = { status: true, user_id: true, limit: true, offset: true };
export const TOOL_MANIFEST_FIELDS: Fields<ToolManifest> = {
  name: true,
  description: true,
  keywords: true,
  base_url: true,
  actions: true,
  oauth: true,
};
export const TOOL_OAUTH_FIELDS: Fields<ToolOAuth & { client_secret: string }> = {
  authorize_url: true,
  token_url: true,
  revocation_url: true,
  scopes: true,
  client_id: true,
  client_secret: true,
  pkce: true,
  token_auth: true,
};
export const TOOL_ACTION_FIELDS: Fields<ToolAction> = {
  name: true,
  description: true,
  method: true,
  path: true,
  input_schema: true,
  side_effect: true,
  scopes: true,
  keywords: true,
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Throws InvalidRequestError `invalid_request` naming the first field of `value` that `fields` does not list. */
export function assertKnownFields(call: string, value: unknown, fields: Readonly<Record<string, true>>, path = ''): void {
  if (!isRecord(value)) {
    throw new InvalidRequestError({ code: 'invalid_request', message: `${call}: ${path || 'the argument'} must be an object` });
  }
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(fields, key)) continue;
    throw new InvalidRequestError({
      code: 'invalid_request',
      message: `${call}: ${path}${key} is not an allowed field (allowed: ${Object.keys(fields).join(', ')})`,
    });
  }
}

/** A manifest's own fields, its `oauth`'s and each action's; the values themselves are the API's to check. */
export function assertKnownManifestFields(manifest: unknown): void {
  assertKnownFields('registerTool', manifest, TOOL_MANIFEST_FIELDS);
  const { oauth, actions } = manifest as Record<string, unknown>;
  if (isRecord(oauth)) assertKnownFields('registerTool', oauth, TOOL_OAUTH_FIELDS, 'oauth.');
  if (Array.isArray(actions)) {
    actions.forEach((action: unknown, i) => {
      if (isRecord(action)) assertKnownFields('registerTool', action, TOOL_ACTION_FIELDS, `actions.${i}.`);
    });
  }
}
