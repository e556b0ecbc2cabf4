import { startFakeProvider, type Fault, type FakeProvider, type Reply } from '../../test-support/fake-provider.js';

/** GitHub REST v3 as the executor uses it: issues, comments, labels, repositories. */
export interface FakeGitHub extends FakeProvider {
  issues: Map<string, GhIssue[]>;
}

interface GhIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  labels: { name: string }[];
  html_url: string;
  created_at: string;
  comments: { id: number; body: string; html_url: string; created_at: string }[];
}

function fault(f: Fault): Reply {
  const doc = { documentation_url: 'https://docs.github.com/rest' };
  switch (f.kind) {
    case 'unavailable':
      return { status: f.status ?? 503, body: { message: 'Service Unavailable' } };
    case 'rate_limited':
      return {
        status: 403,
        body: { message: 'API rate limit exceeded for user ID 1.', ...doc },
        headers: {
          'x-ratelimit-remaining': '0',
          'x-ratelimit-limit': '5000',
          ...(f.retryAfter !== undefined ? { 'retry-after': String(f.retryAfter) } : {}),
        },
      };
    case 'unauthorized':
      return { status: 401, body: { message: 'Bad credentials', ...doc } };
    case 'insufficient_scope':
      return {
        status: 403,
        body: { message: 'Resource not accessible by integration', ...doc },
        headers: { 'x-accepted-oauth-scopes': 'repo', 'x-oauth-scopes': 'read:user' },
      };
    case 'client_rejected':
      return {
        status: 401,
        body: { error: 'invalid_client', error_description: 'The client_id and/or client_secret passed are incorrect.' },
      };
  }
}

export async function startFakeGitHub(tokens?: Iterable<string>): Promise<FakeGitHub> {
  const issues = new Map<string, GhIssue[]>();
  const view = (i: GhIssue) => {
    const { comments: _c, ...rest } = i;
    return rest;
  };
  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        const m = /^\/repos\/([^/]+)\/([^/]+)(?:\/issues(?:\/(\d+)(?:\/(comments|labels))?)?)?$/.exec(req.path);
        if (!m) return { status: 404, body: { message: 'Not Found' } };
        const repo = `${m[1]}/${m[2]}`;
        const list = issues.get(repo) ?? [];
        issues.set(repo, list);
        const isIssues = req.path.includes('/issues');
        if (!isIssues && req.method === 'GET') {
          return {
            status: 200,
            body: {
              full_name: repo,
              description: 'A fake repository',
              default_branch: 'main',
              private: false,
              stargazers_count: 42,
              open_issues_count: list.filter((i) => i.state === 'open').length,
              html_url: `https://github.com/${repo}`,
            },
          };
        }
        if (isIssues && !m[3] && req.method === 'POST') {
          const b = req.body as { title: string; body?: string; labels?: string[] };
          const issue: GhIssue = {
            number: list.length + 1,
            title: b.title,
            body: b.body ?? null,
            state: 'open',
            labels: (b.labels ?? []).map((name) => ({ name })),
            html_url: `https://github.com/${repo}/issues/${list.length + 1}`,
            created_at: new Date().toISOString(),
            comments: [],
          };
          list.push(issue);
          return { status: 201, body: view(issue) };
        }
        if (isIssues && !m[3] && req.method === 'GET') {
          const state = req.query.get('state') ?? 'open';
          const labels = req.query.get('labels')?.split(',').filter(Boolean) ?? [];
          const perPage = Number(req.query.get('per_page') ?? 30);
          const out = [...list]
            .reverse()
            .filter((i) => state === 'all' || i.state === state)
            .filter((i) => labels.every((l) => i.labels.some((x) => x.name === l)))
            .slice(0, perPage);
          return { status: 200, body: out.map(view) };
        }
        const issue = list.find((i) => i.number === Number(m[3]));
        if (!issue) return { status: 404, body: { message: 'Not Found' } };
        if (m[4] === 'comments' && req.method === 'POST') {
          const c = {
            id: 1000 + issue.comments.length + 1,
            body: (req.body as { body: string }).body,
            html_url: `${issue.html_url}#issuecomment-${issue.comments.length + 1}`,
            created_at: new Date().toISOString(),
          };
          issue.comments.push(c);
          return { status: 201, body: c };
        }
        if (m[4] === 'labels' && req.method === 'POST') {
          for (const name of (req.body as { labels: string[] }).labels)
            if (!issue.labels.some((l) => l.name === name)) issue.labels.push({ name });
          return { status: 200, body: issue.labels };
        }
        return { status: 404, body: { message: 'Not Found' } };
      },
    },
    tokens,
  );
  return Object.assign(fake, { issues });
}
