import type { Request } from 'express';
import { BUILT_IN_TOOLS } from '@tes/catalog';
import {
  compile,
  compileDynamic,
  describeErrors,
  isoNow,
  toolManifestSchema,
  toolPathSchema,
  type RefusalReply,
  type ToolManifest,
  type ToolView,
} from '@tes/contracts';
import { AppError } from '@tes/errors';
import { validBody } from '@tes/http';
import { refusalError } from '../../upstream.js';

/** Names a custom tool may not take: built-in tools and their OAuth services. */
const RESERVED = new Set(BUILT_IN_TOOLS.flatMap((t) => [t.name, ...(t.service ? [t.service] : [])]));

/**
 * The manifest of POST /v1/tools, checked by the shared schema and then for what a schema
 * cannot say: the name is not a built-in one, action names are unique, each input_schema is
 * a JSON Schema of an object that ajv compiles, and every `{field}` of a path is a required
 * property of its input. Every problem is a 400 invalid_request naming the field.
 */
export function validManifest(req: Request): ToolManifest {
  return checkManifest(validBody<ToolManifest>(req, toolManifestSchema));
}

/** The same checks for a manifest that did not come over HTTP (the operator CLI). */
export function parseManifest(value: unknown): ToolManifest {
  const check = compile<ToolManifest>(toolManifestSchema);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new AppError('invalid_request', 'the manifest must be a JSON object');
  if (!check(value)) throw new AppError('invalid_request', describeErrors(check.errors, 'manifest'));
  return checkManifest(value);
}

function checkManifest(m: ToolManifest): ToolManifest {
  const bad = (message: string): never => {
    throw new AppError('invalid_request', message);
  };
  if (RESERVED.has(m.name)) bad(`name "${m.name}" is a built-in tool or service; choose another`);
  const seen = new Set<string>();
  m.actions.forEach((a, i) => {
    const at = `actions.${i}`;
    if (seen.has(a.name)) bad(`${at}.name "${a.name}" is used by another action`);
    seen.add(a.name);
    const schema = a.input_schema as { type?: unknown; properties?: Record<string, unknown>; required?: unknown };
    if (schema.type !== 'object') bad(`${at}.input_schema must be a JSON Schema with "type": "object"`);
    try {
      compileDynamic(schema);
    } catch (err) {
      bad(`${at}.input_schema is not a valid JSON Schema: ${(err as Error).message}`);
    }
    const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
    for (const [, field] of a.path.matchAll(/\{([^}]*)\}/g)) {
      if (!field || !schema.properties?.[field] || !required.includes(field)) {
        bad(`${at}.path uses {${field ?? ''}}, which must be a required property of ${at}.input_schema`);
      }
    }
  });
  return m;
}

/** The tool as stored and shown: the manifest without the client secret. */
export function toolView(m: ToolManifest): ToolView {
  const { oauth, ...rest } = m;
  if (!oauth) return { ...rest, created_at: isoNow() };
  const { client_secret: _secret, ...publicOauth } = oauth;
  return { ...rest, oauth: publicOauth, created_at: isoNow() };
}

/** The tool name of /v1/tools/:name: 400 naming the parameter when it cannot be a tool name. */
export function toolName(req: Request): string {
  const params = { name: req.params['name'] };
  const check = compile<{ name: string }>(toolPathSchema);
  if (!check(params)) throw new AppError('invalid_request', `path parameter ${describeErrors(check.errors, 'path')}`);
  return params.name;
}

/** The orchestrator's or vault's answer about a tool: an unknown tool is 404 not_found, another refusal the API's error. */
export function toolOrApiError<A extends { ok: true }>(reply: A | RefusalReply, name?: string): A {
  if (reply.ok) return reply;
  if (reply.error.code === 'not_found') throw new AppError('not_found', `No tool ${name ?? ''}`.trim());
  throw refusalError(reply);
}
