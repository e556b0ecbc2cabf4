import type { AxiosResponse } from 'axios';
import { findAction } from '@tes/catalog';
import { ToolError, type ActionImpl, type ToolContext } from '../tool.js';
import { callProvider, classifyHttp, messageOf, retryAfterMs, type Verdict } from '../../provider-api/provider-http.js';

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

type GhMethod = 'GET' | 'POST' | 'PATCH' | 'PUT';

interface GhExtra {
  params?: Record<string, unknown>;
  body?: unknown;
  /** Turns GitHub's refusals (4xx other than auth, scope, not found, rate limit) into a step_failed the user can act on. */
  refusal?: (status: number, body: unknown) => ToolError;
}

async function gh<T>(ctx: ToolContext, action: string, method: GhMethod, path: string, extra: GhExtra = {}): Promise<T> {
  const def = findAction('github', action);
  const { refusal, ...rest } = extra;
  const res = await callProvider<T>(ctx, {
    service: 'github',
    scopes: def?.scopes ?? [],
    method,
    path,
    headers: HEADERS,
    write: def?.side_effect !== 'read',
    classify,
    ...(refusal ? { passThrough: ['conflict', 'rejected'] as const } : {}),
    ...rest,
  });
  if (refusal && (res.status < 200 || res.status >= 300)) throw refusal(res.status, res.data);
  return res.data;
}

/** GitHub's message with what each validation error says (provider-http's messageOf reads `errors`). */
function detailOf(body: unknown): string {
  return messageOf(body) ?? 'no detail';
}

/** A refusal read from its status and body, with a suggestion in the user's terms. */
function refused(what: string, suggest: (status: number, detail: string) => string | undefined) {
  return (status: number, body: unknown) => {
    const detail = detailOf(body);
    return new ToolError('step_failed', `GitHub refused to ${what} (HTTP ${status}): ${detail}`, false, suggest(status, detail));
  };
}

const checkValues = () => 'Check the values in the request (names, logins, numbers), then retry';

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

const issuePath = (input: Record<string, unknown>) => `${repoPath(input)}/issues/${Number(input['issue_number'])}`;
const pullPath = (input: Record<string, unknown>) => `${repoPath(input)}/pulls/${Number(input['pull_number'])}`;
const fullName = (input: Record<string, unknown>) => `${String(input['owner'])}/${String(input['repo'])}`;

/** A pull request as the list (pull-request-simple: no `merged`, only `merged_at`) or the single read answers it. */
interface GhPull {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  draft?: boolean;
  merged?: boolean;
  merged_at?: string | null;
  user?: { login: string } | null;
  head: { ref: string };
  base: { ref: string };
  html_url: string;
  created_at: string;
}

export function pullOut(p: GhPull): Record<string, unknown> {
  return {
    number: p.number,
    title: p.title,
    body: p.body ?? null,
    state: p.state === 'closed' ? 'closed' : 'open',
    draft: p.draft ?? false,
    merged: p.merged ?? (p.merged_at !== undefined && p.merged_at !== null),
    author: p.user?.login ?? null,
    head: p.head.ref,
    base: p.base.ref,
    url: p.html_url,
    created_at: p.created_at,
  };
}

interface GhRepo {
  full_name: string;
  description: string | null;
  private: boolean;
  default_branch: string;
  html_url: string;
  stargazers_count: number;
  language: string | null;
}

/** PATCH /repos/{owner}/{repo}/issues/{n}: the one call behind close, reopen and update. */
async function patchIssue(ctx: ToolContext, action: string, input: Record<string, unknown>, body: Record<string, unknown>) {
  const n = Number(input['issue_number']);
  const issue = await gh<GhIssue>(ctx, action, 'PATCH', issuePath(input), {
    body,
    refusal: refused(`change issue #${n} in ${fullName(input)}`, checkValues),
  });
  return issueOut(issue);
}

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
  get_issue: async (input, ctx) => issueOut(await gh<GhIssue>(ctx, 'get_issue', 'GET', issuePath(input))),
  close_issue: (input, ctx) => patchIssue(ctx, 'close_issue', input, { state: 'closed', state_reason: input['reason'] ?? 'completed' }),
  reopen_issue: (input, ctx) => patchIssue(ctx, 'reopen_issue', input, { state: 'open', state_reason: 'reopened' }),
  update_issue: (input, ctx) =>
    patchIssue(
      ctx,
      'update_issue',
      input,
      Object.fromEntries(['title', 'body', 'assignees'].filter((k) => input[k] !== undefined).map((k) => [k, input[k]])),
    ),
  list_pull_requests: async (input, ctx) => {
    const pulls = await gh<GhPull[]>(ctx, 'list_pull_requests', 'GET', `${repoPath(input)}/pulls`, {
      params: { state: input['state'] ?? 'open', per_page: input['limit'] ?? 30, sort: 'created', direction: 'desc' },
    });
    const items = pulls.map(pullOut);
    return { items, count: items.length };
  },
  get_pull_request: async (input, ctx) => pullOut(await gh<GhPull>(ctx, 'get_pull_request', 'GET', pullPath(input))),
  comment_on_pull_request: async (input, ctx) => {
    // A pull request's conversation is its issue's: GitHub takes these comments on the issues endpoint.
    const n = Number(input['pull_number']);
    const c = await gh<{ id: number; body: string; html_url: string; created_at: string }>(
      ctx,
      'comment_on_pull_request',
      'POST',
      `${repoPath(input)}/issues/${n}/comments`,
      { body: { body: input['body'] }, refusal: refused(`comment on pull request #${n} in ${fullName(input)}`, checkValues) },
    );
    return { id: c.id, pull_number: n, body: c.body, url: c.html_url, created_at: c.created_at };
  },
  merge_pull_request: async (input, ctx) => {
    const n = Number(input['pull_number']);
    const r = await gh<{ sha: string; merged: boolean; message: string }>(ctx, 'merge_pull_request', 'PUT', `${pullPath(input)}/merge`, {
      body: { merge_method: input['merge_method'] ?? 'merge' },
      // 405: not mergeable (conflicts, failing checks, missing reviews, a draft, a disallowed method); 409: the head moved.
      refusal: refused(`merge pull request #${n} in ${fullName(input)}`, (status) =>
        status === 405
          ? `Pull request #${n} cannot be merged as it is: resolve its conflicts, required checks or reviews on GitHub (or try another merge_method), then retry`
          : status === 409
            ? `Pull request #${n} changed while merging: review its latest commits, then retry the merge`
            : checkValues(),
      ),
    });
    return { pull_number: n, merged: r.merged, sha: r.sha, message: r.message };
  },
  search_repositories: async (input, ctx) => {
    const r = await gh<{ items: GhRepo[] }>(ctx, 'search_repositories', 'GET', '/search/repositories', {
      params: { q: input['query'], per_page: input['limit'] ?? 10 },
      refusal: refused('run the repository search', () => 'Check the search query: words plus qualifiers such as user:, org: or language:'),
    });
    const items = r.items.map((x) => ({
      full_name: x.full_name,
      description: x.description,
      stars: x.stargazers_count,
      language: x.language ?? null,
      private: x.private,
      url: x.html_url,
    }));
    return { items, count: items.length };
  },
  create_repository: async (input, ctx) => {
    const org = input['org'] as string | undefined;
    const name = String(input['name']);
    const where = org ? `/orgs/${encodeURIComponent(org)}/repos` : '/user/repos';
    const r = await gh<GhRepo>(ctx, 'create_repository', 'POST', where, {
      body: {
        name,
        ...(input['description'] !== undefined ? { description: input['description'] } : {}),
        // Private unless the user said otherwise (GitHub's own default is public).
        private: input['private'] ?? true,
      },
      refusal: refused(`create the repository ${name}`, (status, detail) =>
        status === 422 && /already exists/i.test(detail)
          ? `A repository named ${name} already exists ${org ? `in ${org}` : 'on this account'}: choose another name, or use the existing one`
          : 'Check the repository name (letters, digits, - _ .) and options, then retry',
      ),
    });
    return { full_name: r.full_name, description: r.description, private: r.private, default_branch: r.default_branch, url: r.html_url };
  },
};
