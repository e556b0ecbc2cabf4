import type { AxiosResponse } from 'axios';
import { findAction } from '@tes/catalog';
import type { ActionImpl, ToolContext } from '../tool.js';
import { callProvider, classifyHttp, retryAfterMs, type Verdict } from '../../providers/provider-http.js';

/**
 * Slack Web API (SLACK_API_URL, default https://slack.com/api). Slack answers most
 * errors with HTTP 200 and `{ok: false, error}`; 429 carries Retry-After. Slack takes
 * no idempotency key.
 */
function classify(res: AxiosResponse): Verdict {
  if (res.status === 429) return { kind: 'rate_limited', retryAfterMs: retryAfterMs(res) };
  const body = (res.data ?? {}) as { ok?: boolean; error?: string; needed?: string };
  if (res.status !== 200 || body.ok === undefined) return classifyHttp(res);
  if (body.ok) return { kind: 'ok' };
  switch (body.error) {
    case 'invalid_auth':
    case 'not_authed':
    case 'token_expired':
    case 'token_revoked':
    case 'account_inactive':
      return { kind: 'unauthorized' };
    case 'missing_scope':
    case 'no_permission':
    case 'not_allowed_token_type':
      return { kind: 'insufficient_scope', detail: body.needed ? `${body.error}, needed: ${body.needed}` : body.error };
    case 'invalid_client_id':
    case 'invalid_client':
    case 'bad_client_secret':
      return { kind: 'client_rejected', detail: body.error };
    case 'ratelimited':
    case 'rate_limited':
      return { kind: 'rate_limited', retryAfterMs: retryAfterMs(res) };
    case 'channel_not_found':
      return { kind: 'not_found', detail: body.error };
    case 'internal_error':
    case 'fatal_error':
    case 'service_unavailable':
      return { kind: 'unavailable' };
    default:
      return { kind: 'rejected', detail: body.error };
  }
}

async function slack<T>(
  ctx: ToolContext,
  action: string,
  method: 'GET' | 'POST',
  path: string,
  extra: { params?: Record<string, unknown>; body?: unknown },
): Promise<T> {
  const def = findAction('slack', action);
  const res = await callProvider<T>(ctx, {
    service: 'slack',
    scopes: def?.scopes ?? [],
    method,
    path,
    write: def?.side_effect !== 'read',
    classify,
    headers: method === 'POST' ? { 'Content-Type': 'application/json; charset=utf-8' } : {},
    ...extra,
  });
  return res.data;
}

export const slackLive: Record<string, ActionImpl> = {
  post_message: async (input, ctx) => {
    const r = await slack<{ channel: string; ts: string; message?: { text?: string } }>(ctx, 'post_message', 'POST', '/chat.postMessage', {
      body: { channel: input['channel'], text: input['text'] },
    });
    return { channel: r.channel, ts: r.ts, text: r.message?.text ?? String(input['text']) };
  },
  list_channels: async (input, ctx) => {
    const r = await slack<{ channels: { id: string; name: string; is_private?: boolean; num_members?: number }[] }>(
      ctx,
      'list_channels',
      'GET',
      '/conversations.list',
      {
        params: { limit: input['limit'] ?? 100, exclude_archived: true, types: 'public_channel,private_channel' },
      },
    );
    const items = r.channels.map((c) => ({ id: c.id, name: c.name, is_private: c.is_private ?? false, num_members: c.num_members ?? 0 }));
    return { items, count: items.length };
  },
};
