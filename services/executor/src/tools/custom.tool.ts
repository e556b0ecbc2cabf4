import { compileDynamic, describeErrors, type StepRun } from '@tes/contracts';
import { callProvider } from '../provider-api/provider-http.js';
import { requireSandboxConnection } from './sandbox-scope.js';
import { customToolOutbound, refusalOf, refusedText } from './ssrf.js';
import { ToolError, type ToolContext } from './tool.js';

export type CustomAction = NonNullable<StepRun['custom']>;

/** The input checked against the action's registered schema (defaults applied). */
export function checkCustomInput(custom: CustomAction, input: Record<string, unknown>, label: string): void {
  let check: ReturnType<typeof compileDynamic>;
  try {
    check = compileDynamic(custom.input_schema);
  } catch (err) {
    throw new ToolError('step_failed', `${label}: the registered input schema does not compile (${(err as Error).message})`, false);
  }
  if (!check(input)) throw new ToolError('step_failed', `invalid input for ${label}: ${describeErrors(check.errors, 'input')}`, false);
}

/**
 * The HTTP request of a custom action: `{field}` in the path takes that input field
 * (URL-encoded); the other fields go in the query string (GET, DELETE) or as the JSON body.
 */
export function customRequest(
  custom: CustomAction,
  input: Record<string, unknown>,
): { path: string; params?: Record<string, unknown>; body?: unknown } {
  const rest = { ...input };
  const path = custom.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const v = rest[name];
    delete rest[name];
    if (v === undefined || v === null) throw new ToolError('step_failed', `path parameter ${name} is missing`, false);
    return encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v));
  });
  if (custom.method === 'GET' || custom.method === 'DELETE') return Object.keys(rest).length ? { path, params: rest } : { path };
  return { path, body: rest };
}

/**
 * Runs a custom tool's action. Test keys never reach the account's API: the step answers
 * the request it would have made (the sandbox of a custom tool), after the sandbox consent when
 * the tool has OAuth. Live keys call it with the
 * user's token from the vault (when the tool has OAuth), through the SSRF guard and the
 * same retry and failure mapping as the built-in providers.
 */
export async function runCustomAction(
  custom: CustomAction,
  input: Record<string, unknown>,
  ctx: ToolContext,
): Promise<Record<string, unknown>> {
  const req = customRequest(custom, input);
  const url = `${custom.base_url.replace(/\/+$/, '')}${req.path}`;
  if (ctx.step.environment === 'test') {
    if (custom.service !== null) await requireSandboxConnection(ctx, custom.service ?? ctx.step.tool, custom.scopes);
    return {
      sandbox: true,
      request: {
        method: custom.method,
        url,
        ...(req.params ? { query: req.params } : {}),
        ...(req.body !== undefined ? { body: req.body } : {}),
      },
    };
  }
  const agents = customToolOutbound(ctx.env.settings.http, ctx.step.environment);
  try {
    agents.policy.checkUrl(url);
  } catch (err) {
    const refused = refusalOf(err);
    if (refused) throw new ToolError('step_failed', `${ctx.step.tool}: ${refusedText(url, refused)}`, false);
    throw err;
  }
  const res = await callProvider<unknown>(ctx, {
    service: custom.service ?? ctx.step.tool,
    anonymous: custom.service === null,
    scopes: custom.scopes,
    baseUrl: custom.base_url.replace(/\/+$/, ''),
    method: custom.method,
    path: req.path,
    ...(req.params ? { params: req.params } : {}),
    ...(req.body !== undefined ? { body: req.body } : {}),
    write: custom.method !== 'GET',
    agents,
  });
  // The result is an object: the API's JSON object as is, anything else under `data`.
  const data = res.data;
  return data !== null && typeof data === 'object' && !Array.isArray(data)
    ? (data as Record<string, unknown>)
    : { data: data ?? null, status: res.status };
}
