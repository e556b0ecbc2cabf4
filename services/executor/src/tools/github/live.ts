import type { AxiosResponse } from 'axios';
import { findAction } from '@tes/catalog';
import type { ActionImpl, ToolContext } from '../tool.js';
import { callProvider, classifyHttp, messageOf, retryAfterMs, type Verdict } from '../../providers/provider-http.js';

/**
 * GitHub REST API v3 (GITHUB_API_URL, default https://api.github.com). GitHub takes no
 * idempotency key: a create retried after a 5xx may be duplicated there (documented).
 */
function classify(res: AxiosResponse): Verdict {
  if (res.status === 403 || res.status === 429) {
    const remaining = res.headers['x-ratelimit-remaining'] as string | undefined;
    const msg = messageOf(res.data) ?? '';
    if (res.status === 429 || remaining === '0' || /rate limit/i.test(msg)) {
      const reset = Number(res.headers['x-ratelimit-reset']);
      const fromReset = Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : undefined;
      return { kind: 'rate_limited', retryAfterMs: retryAfterMs(res) ?? fromReset };
    }
    const accepted = res.headers['x-accepted-oauth-scopes'] as string | undefined;
    return { kind: 'insufficient_scope', detail: accepted ? `${msg}; accepted scopes: ${accepted}` : msg };
  }
  return classifyHttp(res);
}

const HEADERS = { Accept: 'application/vnd.github+json', 'X-GitHub-Api-Version': '2022-11-28' };

async function gh<T>(
  ctx: ToolContext,
  action: string,
  method: 'GET' | 'POST',
  path: string,
  extra: { params?: Record<string, unknown>; body?: unknown } = {},
): Promise<T> {
  const def = findAction('github', action);
  const res = await callProvider<T>(ctx, {
    service: 'github',
    scopes: def?.scopes ?? [],
    method,
    path,
    headers: HEADERS,
    write: def?.side_effect !== 'read',
    classify,
    ...extra,
  });
  return res.data;
}

interface GhIssue {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  labels: ({ name: string } | string)[];
  html_url: string;
  created_at: string;
  pull_request?: unknown;
}

export function issueOut(i: GhIssue): Record<string, unknown> {
  return {
    number: i.number,
    title: i.title,
    body: i.body ?? null,
    state: i.state === 'closed' ? 'closed' : 'open',
    labels: i.labels.map((l) => (typeof l === 'string' ? l : l.name)),
    url: i.html_url,
    created_at: i.created_at,
  };
}

const repoPath = (input: Record<string, unknown>) =>
  `/repos/${encodeURIComponent(String(input['owner']))}/${encodeURIComponent(String(input['repo']))}`;

export const githubLive: Record<string, ActionImpl> = {
  create_issue: async (input, ctx) => {
    const issue = await gh<GhIssue>(ctx, 'create_issue', 'POST', `${repoPath(input)}/issues`, {
      body: {
        title: input['title'],
        ...(input['body'] !== undefined ? { body: input['body'] } : {}),
        ...(input['labels'] !== undefined ? { labels: input['labels'] } : {}),
      },
    });
    return issueOut(issue);
  },
  list_issues: async (input, ctx) => {
    const labels = input['labels'] as string[] | undefined;
    const issues = await gh<GhIssue[]>(ctx, 'list_issues', 'GET', `${repoPath(input)}/issues`, {
      params: {
        state: input['state'] ?? 'open',
        per_page: input['limit'] ?? 30,
        sort: 'created',
        direction: 'desc',
        ...(labels?.length ? { labels: labels.join(',') } : {}),
      },
    });
    const items = issues.filter((i) => !i.pull_request).map(issueOut);
    return { items, count: items.length };
  },
  comment_on_issue: async (input, ctx) => {
    const c = await gh<{ id: number; body: string; html_url: string; created_at: string }>(
      ctx,
      'comment_on_issue',
      'POST',
      `${repoPath(input)}/issues/${Number(input['issue_number'])}/comments`,
      {
        body: { body: input['body'] },
      },
    );
    return { id: c.id, issue_number: input['issue_number'], body: c.body, url: c.html_url, created_at: c.created_at };
  },
  add_labels: async (input, ctx) => {
    const labels = await gh<{ name: string }[]>(
      ctx,
      'add_labels',
      'POST',
      `${repoPath(input)}/issues/${Number(input['issue_number'])}/labels`,
      { body: { labels: input['labels'] } },
    );
    return { issue_number: input['issue_number'], labels: labels.map((l) => l.name) };
  },
  get_repository: async (input, ctx) => {
    const r = await gh<{
      full_name: string;
      description: string | null;
      default_branch: string;
      private: boolean;
      stargazers_count: number;
      open_issues_count: number;
      html_url: string;
    }>(ctx, 'get_repository', 'GET', repoPath(input));
    return {
      full_name: r.full_name,
      description: r.description,
      default_branch: r.default_branch,
      private: r.private,
      stars: r.stargazers_count,
      open_issues: r.open_issues_count,
      url: r.html_url,
    };
  },
};
