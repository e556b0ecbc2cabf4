import type { AxiosResponse } from 'axios';
import { lazyAxios } from './lazy-axios.js';
import { outbound, refusalOf, refusedText } from './ssrf.js';
import { ToolError, type ActionImpl, type ToolContext } from './tool.js';

/**
 * The `http` tool: no user connection. `fetch` (GET) runs in both environments; `post`
 * reaches the network only with live keys (test keys answer a simulated 200). Every
 * hop, redirects included (at most 3), passes the SSRF guard; the body is limited to
 * HTTP_TOOL_MAX_BYTES and the request to HTTP_TOOL_TIMEOUT_MS.
 */
const MAX_REDIRECTS = 3;
async function send(
  ctx: ToolContext,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  json?: unknown,
): Promise<Record<string, unknown>> {
  const { maxBytes, timeoutMs } = ctx.env.settings.http;
  const a = outbound(ctx.env.settings.http);
  let current = url;
  let verb = method;
  for (let hop = 0; ; hop++) {
    let res: AxiosResponse<ArrayBuffer>;
    try {
      const u = a.policy.checkUrl(current);
      const axios = await lazyAxios();
      res = await axios.request<ArrayBuffer>({
        method: verb,
        url: u.toString(),
        headers: {
          'User-Agent': 'task-execution-service/1.0',
          ...headers,
          ...(verb === 'POST' ? { 'Content-Type': 'application/json', 'Idempotency-Key': ctx.step.idempotency_key } : {}),
        },
        ...(verb === 'POST' ? { data: JSON.stringify(json) } : {}),
        httpAgent: a.http,
        httpsAgent: a.https,
        proxy: false,
        maxRedirects: 0,
        maxContentLength: maxBytes,
        maxBodyLength: maxBytes,
        timeout: timeoutMs,
        signal: ctx.signal,
        responseType: 'arraybuffer',
        validateStatus: () => true,
        decompress: true,
      });
    } catch (err) {
      throw describe(err, current, maxBytes, timeoutMs);
    }
    const location = res.headers['location'] as string | undefined;
    if (res.status >= 300 && res.status < 400 && location) {
      if (hop >= MAX_REDIRECTS) throw new ToolError('step_failed', `${url}: more than ${MAX_REDIRECTS} redirects`, false);
      current = new URL(location, current).toString();
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && verb === 'POST')) verb = 'GET';
      continue;
    }
    const buf = Buffer.from(res.data);
    const contentType = String(res.headers['content-type'] ?? '');
    const body = buf.toString('utf8');
    let parsed: unknown;
    if (/json/i.test(contentType)) {
      try {
        parsed = JSON.parse(body) as unknown;
      } catch {
        parsed = undefined;
      }
    }
    return {
      url: current,
      status: res.status,
      content_type: contentType,
      body,
      ...(parsed !== undefined ? { json: parsed } : {}),
      bytes: buf.length,
    };
  }
}

function describe(err: unknown, url: string, maxBytes: number, timeoutMs: number): Error {
  const refused = refusalOf(err);
  if (refused) return new ToolError('step_failed', refusedText(url, refused), false, 'Only public http(s) addresses can be fetched');
  const e = err as { code?: string; message?: string };
  if (/maxContentLength|maxBodyLength/.test(e.message ?? ''))
    return new ToolError('step_failed', `${url}: the response is larger than ${maxBytes} bytes`, false);
  if (e.code === 'ECONNABORTED' || e.code === 'ETIMEDOUT')
    return new ToolError('service_unavailable', `${url} did not answer within ${timeoutMs} ms`, true, 'Retry later');
  if (e.code === 'ERR_CANCELED') return err as Error;
  return new ToolError(
    'service_unavailable',
    `${url} could not be reached (${e.code ?? e.message ?? 'error'})`,
    true,
    'Check the URL or retry later',
  );
}

export const httpActions: Record<string, ActionImpl> = {
  fetch: (input, ctx) => send(ctx, 'GET', String(input['url']), (input['headers'] as Record<string, string> | undefined) ?? {}),
  post: async (input, ctx) => {
    if (ctx.step.environment === 'test') {
      // Sandbox: no request leaves the service; the URL is still checked.
      const url = String(input['url']);
      try {
        outbound(ctx.env.settings.http).policy.checkUrl(url);
      } catch (err) {
        const refused = refusalOf(err);
        if (refused) throw new ToolError('step_failed', refusedText(url, refused), false, 'Only public http(s) addresses can be fetched');
        throw err;
      }
      const body = JSON.stringify({ sandbox: true, received: input['json'] ?? null });
      return {
        url: input['url'],
        status: 200,
        content_type: 'application/json',
        body,
        json: JSON.parse(body) as unknown,
        bytes: Buffer.byteLength(body),
      };
    }
    return send(ctx, 'POST', String(input['url']), (input['headers'] as Record<string, string> | undefined) ?? {}, input['json']);
  },
};
