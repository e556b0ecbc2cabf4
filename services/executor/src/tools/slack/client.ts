import type { AxiosResponse } from 'axios';
import { findAction } from '@tes/catalog';
import { ToolError, type ToolContext } from '../tool.js';
import { notFound, slackFailure } from './errors.js';
import { callProvider, classifyHttp, retryAfterMs, type Verdict } from '../../provider-api/provider-http.js';

/**
 * Calls to the Slack Web API (SLACK_API_URL, default https://slack.com/api), and the names of
 * people and channels resolved to ids, for the live actions (live.ts). Slack answers most
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

/** Slack's ok:false codes that are the request's own fault: answered with the user's terms (errors.ts). */
const PASS = ['not_found', 'rejected'] as const;

export async function slack<T>(
  ctx: ToolContext,
  action: string,
  method: 'GET' | 'POST',
  path: string,
  extra: { params?: Record<string, unknown>; body?: unknown; subject?: string },
): Promise<T> {
  const def = findAction('slack', action);
  const res = await callProvider<T & { ok?: boolean; error?: string }>(ctx, {
    service: 'slack',
    scopes: def?.scopes ?? [],
    method,
    path,
    // Lookups inside a write action are reads: no Idempotency-Key on them.
    write: method === 'POST' && def?.side_effect !== 'read',
    classify,
    passThrough: PASS,
    headers: method === 'POST' ? { 'Content-Type': 'application/json; charset=utf-8' } : {},
    ...(extra.params ? { params: extra.params } : {}),
    ...(extra.body !== undefined ? { body: extra.body } : {}),
  });
  const body = (typeof res.data === 'object' && res.data !== null ? res.data : {}) as { ok?: boolean; error?: string };
  if (body.ok !== true) slackFailure(body.error ?? `HTTP ${res.status}`, extra.subject);
  return res.data;
}

interface SlackUser {
  id: string;
  name?: string;
  real_name?: string;
  deleted?: boolean;
  is_bot?: boolean;
  profile?: { display_name?: string; real_name?: string; email?: string };
}

const USER_ID = /^[UW][A-Z0-9]{2,}$/;
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,}$/;
const PAGE = 200;
/** users.list / conversations.list pages read at most when resolving a name. */
const MAX_PAGES = 20;

/**
 * Slack user ids for what a person wrote: an id as is, an email through
 * users.lookupByEmail, an @handle or a name through users.list (read once per step).
 */
export async function userIds(ctx: ToolContext, action: string, given: readonly string[]): Promise<string[]> {
  let members: SlackUser[] | undefined;
  const ids: string[] = [];
  for (const raw of given) {
    const who = raw.trim();
    if (USER_ID.test(who)) {
      ids.push(who);
    } else if (/^[^@\s]+@[^@\s]+$/.test(who)) {
      const r = await slack<{ user: SlackUser }>(ctx, action, 'GET', '/users.lookupByEmail', { params: { email: who }, subject: who });
      ids.push(r.user.id);
    } else {
      members ??= await allUsers(ctx, action);
      ids.push(matchUser(members, who));
    }
  }
  return [...new Set(ids)];
}

async function allUsers(ctx: ToolContext, action: string): Promise<SlackUser[]> {
  const out: SlackUser[] = [];
  let cursor = '';
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const r = await slack<{ members: SlackUser[]; response_metadata?: { next_cursor?: string } }>(ctx, action, 'GET', '/users.list', {
      params: { limit: PAGE, ...(cursor ? { cursor } : {}) },
    });
    out.push(...r.members.filter((m) => !m.deleted));
    cursor = r.response_metadata?.next_cursor ?? '';
    if (!cursor) break;
  }
  return out;
}

/** A handle (name, display name) first, then a full name; several people of one full name is ambiguous. */
function matchUser(members: readonly SlackUser[], written: string): string {
  const who = written.replace(/^@/, '').trim().toLowerCase();
  const handle = members.find((m) => m.name?.toLowerCase() === who || m.profile?.display_name?.toLowerCase() === who);
  if (handle) return handle.id;
  const named = members.filter((m) => (m.real_name ?? m.profile?.real_name ?? '').toLowerCase() === who);
  if (named.length === 1 && named[0]) return named[0].id;
  if (named.length > 1) {
    throw new ToolError(
      'step_failed',
      `Several Slack users are named "${written}": ${named.map((m) => `@${m.name ?? m.id}`).join(', ')}`,
      false,
      'Name the person by their @handle or email address',
    );
  }
  return notFound('user', `"${written}"`);
}

/** A channel id for a name (without "#") through conversations.list; an id is taken as is. */
export async function channelId(ctx: ToolContext, action: string, given: string): Promise<string> {
  const name = given.replace(/^#/, '').trim();
  if (CHANNEL_ID.test(name)) return name;
  let cursor = '';
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const r = await slack<{ channels: { id: string; name: string }[]; response_metadata?: { next_cursor?: string } }>(
      ctx,
      action,
      'GET',
      '/conversations.list',
      { params: { limit: PAGE, exclude_archived: true, types: 'public_channel,private_channel', ...(cursor ? { cursor } : {}) } },
    );
    const hit = r.channels.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (hit) return hit.id;
    cursor = r.response_metadata?.next_cursor ?? '';
    if (!cursor) break;
  }
  return notFound('channel', `#${name}`);
}

/** Slack timestamps are seconds since the epoch with a sequence fraction ("1710000000.000100"). */
export const tsToIso = (ts: string) => new Date(Math.floor(Number(ts) * 1000)).toISOString();
