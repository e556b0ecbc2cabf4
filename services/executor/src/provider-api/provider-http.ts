import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { AxiosResponse, Method } from 'axios';
import { lazyAxios } from '../tools/lazy-axios.js';
import { ToolError, type ToolContext } from '../tools/tool.js';
import { isProviderName } from '../tools/provider-apis.js';
import { notFoundAdvice, rateLimitAdvice, reconnectAdvice, rejectedAdvice, unavailableAdvice } from '../domain/failure-advice.js';
import { accessToken, serviceLabel } from './credentials.js';

/** How one provider answer is to be understood. */
export type Verdict =
  | { kind: 'ok' }
  | { kind: 'unavailable' }
  | { kind: 'rate_limited'; retryAfterMs?: number | undefined }
  | { kind: 'unauthorized' }
  | { kind: 'insufficient_scope'; detail?: string | undefined }
  | { kind: 'client_rejected'; detail?: string | undefined }
  | { kind: 'not_found'; detail?: string | undefined }
  | { kind: 'conflict' }
  | { kind: 'rejected'; detail?: string | undefined };

export type Classifier = (res: AxiosResponse) => Verdict;

export interface ProviderRequest {
  /** A built-in provider, or a custom tool's OAuth service (its name). */
  service: string;
  scopes: readonly string[];
  /** Instead of the built-in provider's base URL (custom tools). */
  baseUrl?: string;
  /** No user token: the API needs no authorization (a custom tool without OAuth). */
  anonymous?: boolean;
  /** Agents that every connection must use (the SSRF guard for account-supplied URLs). */
  agents?: { http: HttpAgent; https: HttpsAgent };
  method: Method;
  path: string;
  params?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Side-effecting call: send the step's idempotency key (`Idempotency-Key`). */
  write?: boolean;
  classify?: Classifier;
  /** What to grant when access is refused, for providers without scopes (Notion). */
  accessHint?: string;
  /** Verdicts the caller handles itself (e.g. a 409 on an idempotent create). */
  passThrough?: readonly Verdict['kind'][];
}

const stepTokens = new WeakMap<ToolContext, Map<string, string>>();

/**
 * One call to a provider's API with the user's token, mapping its faults to the spec's
 * failure codes:
 *   5xx or no answer → retried with exponential backoff, then service_unavailable (status + attempts)
 *   429              → waits Retry-After (else backoff), retries, then rate_limited
 *   401              → one forced refresh through the vault, one more try, then auth_token_expired
 *   403 scope        → permission_denied (recoverable: re-authorize with the scopes)
 *   client rejected  → invalid_credentials
 *   404              → step_failed, suggesting to check what the step names (failure-advice.ts)
 *   409 / other 4xx  → step_failed (a conflict is recoverable, a rejected request is not)
 */
export async function callProvider<T = unknown>(
  ctx: ToolContext,
  req: ProviderRequest,
): Promise<{ status: number; data: T; headers: AxiosResponse['headers'] }> {
  const s = ctx.env.settings;
  const label = serviceLabel(req.service);
  const classify = req.classify ?? classifyHttp;
  // One token per step and service: an action making several calls asks the vault once.
  let tokens = stepTokens.get(ctx);
  if (!tokens) {
    tokens = new Map<string, string>();
    stepTokens.set(ctx, tokens);
  }
  let token = req.anonymous ? '' : (tokens.get(req.service) ?? (await accessToken(ctx, req.service, req.scopes)));
  if (!req.anonymous) tokens.set(req.service, token);
  let refreshed = false;
  let failures = 0;
  let limited = 0;
  let lastProblem = '';

  for (;;) {
    let res: AxiosResponse | undefined;
    try {
      const axios = await lazyAxios();
      res = await axios.request({
        method: req.method,
        baseURL: req.baseUrl ?? (isProviderName(req.service) ? s.providerUrls[req.service] : ''),
        url: req.path,
        ...(req.agents ? { httpAgent: req.agents.http, httpsAgent: req.agents.https, proxy: false as const } : {}),
        ...(req.params ? { params: req.params } : {}),
        ...(req.body !== undefined ? { data: req.body } : {}),
        headers: {
          ...(req.anonymous ? {} : { Authorization: `Bearer ${token}` }),
          Accept: 'application/json',
          'User-Agent': 'task-execution-service/1.0',
          ...(req.write ? { 'Idempotency-Key': ctx.step.idempotency_key } : {}),
          ...(req.headers ?? {}),
        },
        timeout: s.requestTimeoutMs,
        signal: ctx.signal,
        validateStatus: () => true,
        maxRedirects: 0,
        // Repeated keys (metadataHeaders=From&metadataHeaders=To), as Google expects.
        paramsSerializer: { indexes: null },
        responseType: 'json',
        transitional: { silentJSONParsing: true, forcedJSONParsing: true, clarifyTimeoutError: true },
      });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      lastProblem = `no answer (${(err as { code?: string }).code ?? (err as Error).message})`;
    }

    const verdict: Verdict = res ? classify(res) : { kind: 'unavailable' };
    if (res && req.passThrough?.includes(verdict.kind)) return { status: res.status, data: res.data as T, headers: res.headers };
    switch (verdict.kind) {
      case 'ok':
        return { status: res?.status ?? 200, data: res?.data as T, headers: res?.headers ?? {} };
      case 'unavailable': {
        failures += 1;
        if (res) lastProblem = `HTTP ${res.status}`;
        if (failures >= s.maxAttempts) {
          throw new ToolError(
            'service_unavailable',
            `${label} answered ${lastProblem} after ${failures} attempts`,
            true,
            unavailableAdvice(label),
          );
        }
        await sleep(backoff(s, failures), ctx.signal);
        break;
      }
      case 'rate_limited': {
        limited += 1;
        const wait = verdict.retryAfterMs ?? backoff(s, limited);
        if (limited >= s.maxAttempts || wait > s.retryAfterMaxMs) {
          const after = verdict.retryAfterMs !== undefined ? `; retry after ${Math.ceil(verdict.retryAfterMs / 1000)} s` : '';
          throw new ToolError(
            'rate_limited',
            `${label} rate limit exceeded (HTTP ${res?.status ?? 429}, ${limited} attempts${after})`,
            true,
            rateLimitAdvice(label, verdict.retryAfterMs),
          );
        }
        await sleep(wait, ctx.signal);
        break;
      }
      case 'unauthorized':
        if (req.anonymous) {
          throw new ToolError(
            'step_failed',
            `${label} refused the request (HTTP ${res?.status ?? 401}); the tool sends no token: it has no OAuth configuration`,
            false,
            `Register ${label} with an oauth block if its API needs a user's authorization`,
          );
        }
        if (refreshed) {
          throw new ToolError(
            'auth_token_expired',
            `${label} rejected the access token, also after a refresh`,
            true,
            reconnectAdvice(label),
          );
        }
        refreshed = true;
        token = await accessToken(ctx, req.service, req.scopes, true);
        tokens.set(req.service, token);
        break;
      case 'insufficient_scope': {
        const needs = req.scopes.join(', ') || req.accessHint || 'more access';
        throw new ToolError(
          'permission_denied',
          `${label} refused ${ctx.step.tool}.${ctx.step.action}: insufficient permissions${verdict.detail ? ` (${verdict.detail})` : ''}; needs ${needs}`,
          true,
          reconnectAdvice(label, needs),
        );
      }
      case 'client_rejected':
        throw new ToolError(
          'invalid_credentials',
          `${label} rejected the OAuth client credentials${verdict.detail ? ` (${verdict.detail})` : ''}`,
          false,
          `Check the ${label} OAuth client id and secret`,
        );
      case 'not_found':
        throw new ToolError(
          'step_failed',
          `${label}: not found${verdict.detail ? ` (${verdict.detail})` : ''}`,
          false,
          notFoundAdvice(ctx.step, ctx.input ?? ctx.step.input, label, req.accessHint),
        );
      case 'conflict': {
        // The state changed under us (or the thing exists already): retrying after a look can succeed.
        const detail = res ? messageOf(res.data) : undefined;
        throw new ToolError(
          'step_failed',
          `${label} rejected the request (HTTP ${res?.status ?? '?'})${detail ? `: ${detail}` : ''}`,
          true,
          rejectedAdvice(ctx.step, ctx.input ?? ctx.step.input, label, true),
        );
      }
      case 'rejected':
        // The same request would be refused again: the request has to change.
        throw new ToolError(
          'step_failed',
          `${label} rejected the request (HTTP ${res?.status ?? '?'})${verdict.detail ? `: ${verdict.detail}` : ''}`,
          false,
          rejectedAdvice(ctx.step, ctx.input ?? ctx.step.input, label, false, verdict.detail),
        );
    }
  }
}

/** The HTTP-status reading shared by every provider; providers add what their bodies say. */
export function classifyHttp(res: AxiosResponse): Verdict {
  const s = res.status;
  const body = (res.data ?? {}) as Record<string, unknown>;
  const oauthError = typeof body['error'] === 'string' ? body['error'] : undefined;
  if (oauthError && /^(?:invalid_client|unauthorized_client|deleted_client|disabled_client)$/.test(oauthError))
    return { kind: 'client_rejected', detail: oauthError };
  if (s >= 200 && s < 300) return { kind: 'ok' };
  if (s === 401) return { kind: 'unauthorized' };
  if (s === 403) return { kind: 'insufficient_scope', detail: messageOf(body) };
  if (s === 404) return { kind: 'not_found', detail: messageOf(body) };
  if (s === 409) return { kind: 'conflict' };
  if (s === 429) return { kind: 'rate_limited', retryAfterMs: retryAfterMs(res) };
  if (s >= 500) return { kind: 'unavailable' };
  return { kind: 'rejected', detail: messageOf(body) };
}

export function messageOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return typeof body === 'string' && body ? body.slice(0, 200) : undefined;
  const b = body as Record<string, unknown>;
  const err = b['error'];
  if (err && typeof err === 'object' && typeof (err as Record<string, unknown>)['message'] === 'string')
    return (err as Record<string, string>)['message'];
  if (typeof b['message'] === 'string') return b['message'] + validationDetail(b['errors']);
  if (typeof err === 'string') return err;
  return undefined;
}

/**
 * GitHub's 422 says only "Validation Failed"; what failed is in `errors`:
 * `[{resource, field, code, message?}]` ("name already exists on this account").
 */
function validationDetail(errors: unknown): string {
  if (!Array.isArray(errors)) return '';
  const parts = errors.flatMap((e: unknown) => {
    if (!e || typeof e !== 'object') return typeof e === 'string' ? [e] : [];
    const o = e as Record<string, unknown>;
    if (typeof o['message'] === 'string') return [o['message']];
    if (typeof o['field'] === 'string' && typeof o['code'] === 'string') return [`${o['field']}: ${o['code'].replaceAll('_', ' ')}`];
    return [];
  });
  return parts.length ? ` (${parts.slice(0, 3).join('; ')})` : '';
}

/** Retry-After in seconds or as an HTTP date. */
export function retryAfterMs(res: AxiosResponse, now = Date.now()): number | undefined {
  const h = res.headers['retry-after'] as string | undefined;
  if (h === undefined || h === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(h.trim())) return Math.round(Number(h) * 1000);
  const at = Date.parse(h);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function backoff(s: { backoffMs: number; backoffMaxMs: number }, attempt: number): number {
  return Math.min(s.backoffMs * 2 ** (attempt - 1), s.backoffMaxMs);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
