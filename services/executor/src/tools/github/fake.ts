import {
  notFound,
  startFakeProvider,
  type Fault,
  type FakeProvider,
  type FakeRequest,
  type Reply,
} from '../../test-support/fake-provider.js';

/**
 * GitHub REST v3 as the executor uses it: issues (pull requests are issues too, sharing their
 * numbers, as on GitHub), comments, labels, pull requests and merges, repositories and search.
 */
export interface FakeGitHub extends FakeProvider {
  issues: Map<string, GhIssue[]>;
  /** Repositories created through the API or added by a test, by full name (lowercase). */
  repos: Map<string, GhRepo>;
  /**
   * Opens a pull request in a repository (numbered with its issues). `mergeable: false` makes a
   * merge answer 405; `headMoves: true` makes it answer 409, as when a push lands during the merge.
   */
  addPull(
    repo: string,
    pull: { title: string; head?: string; base?: string; draft?: boolean; mergeable?: boolean; headMoves?: boolean },
  ): GhIssue;
}

export interface GhIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  state_reason: 'completed' | 'not_planned' | 'reopened' | null;
  labels: { name: string }[];
  assignees: { login: string }[];
  user: { login: string };
  html_url: string;
  created_at: string;
  comments: { id: number; body: string; html_url: string; created_at: string }[];
  pull?: {
    head: string;
    base: string;
    draft: boolean;
    mergeable: boolean;
    headMoves: boolean;
    merged_at: string | null;
    merge_commit_sha: string | null;
  };
}

export interface GhRepo {
  full_name: string;
  description: string | null;
  private: boolean;
  default_branch: string;
  stargazers_count: number;
  language: string | null;
  html_url: string;
}

/** The login the fake's tokens belong to (POST /user/repos creates under it). */
export const FAKE_LOGIN = 'octo-user';

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

const validation = (message: string, errors: Record<string, string>[]): Reply => ({
  status: 422,
  body: { message, errors, documentation_url: 'https://docs.github.com/rest', status: '422' },
});

function issueView(i: GhIssue) {
  const { comments: _c, pull, ...rest } = i;
  return pull ? { ...rest, pull_request: { html_url: i.html_url.replace('/issues/', '/pull/'), merged_at: pull.merged_at } } : rest;
}

/** pull-request-simple (the list): no `merged`, only `merged_at`. */
function pullSimple(i: GhIssue) {
  const p = i.pull!;
  return {
    number: i.number,
    title: i.title,
    body: i.body,
    state: i.state,
    draft: p.draft,
    user: i.user,
    head: { ref: p.head, sha: `head-${i.number}` },
    base: { ref: p.base, sha: 'base-sha' },
    html_url: i.html_url.replace('/issues/', '/pull/'),
    created_at: i.created_at,
    merged_at: p.merged_at,
    merge_commit_sha: p.merge_commit_sha,
  };
}

/** pull-request (one): adds `merged` and `mergeable`. */
const pullFull = (i: GhIssue) => ({ ...pullSimple(i), merged: i.pull!.merged_at !== null, mergeable: i.pull!.mergeable });

export async function startFakeGitHub(tokens?: Iterable<string>): Promise<FakeGitHub> {
  const issues = new Map<string, GhIssue[]>();
  const repos = new Map<string, GhRepo>();
  const listOf = (repo: string) => {
    const list = issues.get(repo) ?? [];
    issues.set(repo, list);
    return list;
  };
  const newIssue = (repo: string, fields: Partial<GhIssue> & { title: string }): GhIssue => {
    const list = listOf(repo);
    const issue: GhIssue = {
      number: list.length + 1,
      body: null,
      state: 'open',
      state_reason: null,
      labels: [],
      assignees: [],
      user: { login: FAKE_LOGIN },
      html_url: `https://github.com/${repo}/issues/${list.length + 1}`,
      created_at: new Date().toISOString(),
      comments: [],
      ...fields,
    };
    list.push(issue);
    return issue;
  };
  const createRepo = (owner: string, b: { name?: string; description?: string; private?: boolean }): Reply => {
    if (!b.name) return validation('Validation Failed', [{ resource: 'Repository', code: 'missing_field', field: 'name' }]);
    const full = `${owner}/${b.name}`;
    if (repos.has(full.toLowerCase()))
      return validation('Repository creation failed.', [
        { resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' },
      ]);
    const r: GhRepo = {
      full_name: full,
      description: b.description ?? null,
      private: b.private ?? false,
      default_branch: 'main',
      stargazers_count: 0,
      language: null,
      html_url: `https://github.com/${full}`,
    };
    repos.set(full.toLowerCase(), r);
    return { status: 201, body: r };
  };

  const routes: { method: string; path: RegExp; reply: (m: RegExpExecArray, req: FakeRequest) => Reply }[] = [
    { method: 'POST', path: /^\/user\/repos$/, reply: (_m, req) => createRepo(FAKE_LOGIN, req.body as object) },
    { method: 'POST', path: /^\/orgs\/([^/]+)\/repos$/, reply: (m, req) => createRepo(m[1]!, req.body as object) },
    {
      method: 'GET',
      path: /^\/search\/repositories$/,
      reply: (_m, req) => {
        const q = req.query.get('q') ?? '';
        if (!q.trim()) return validation('Validation Failed', [{ resource: 'Search', field: 'q', code: 'missing' }]);
        const words = q.toLowerCase().split(/\s+/);
        const items = [...repos.values()]
          .filter((r) =>
            words.every((w) => {
              const [k, v] = w.split(':');
              if (v !== undefined && (k === 'user' || k === 'org')) return r.full_name.toLowerCase().startsWith(`${v}/`);
              return `${r.full_name} ${r.description ?? ''}`.toLowerCase().includes(w);
            }),
          )
          .sort((a, b) => b.stargazers_count - a.stargazers_count);
        const perPage = Number(req.query.get('per_page') ?? 30);
        return { status: 200, body: { total_count: items.length, incomplete_results: false, items: items.slice(0, perPage) } };
      },
    },
    {
      method: 'GET',
      path: /^\/repos\/([^/]+)\/([^/]+)$/,
      reply: (m) => {
        const repo = `${m[1]}/${m[2]}`;
        const known = repos.get(repo.toLowerCase());
        const open = listOf(repo).filter((i) => i.state === 'open').length;
        return {
          status: 200,
          body: {
            full_name: repo,
            description: 'A fake repository',
            default_branch: 'main',
            private: false,
            stargazers_count: 42,
            html_url: `https://github.com/${repo}`,
            ...known,
            open_issues_count: open,
          },
        };
      },
    },
    {
      method: 'POST',
      path: /^\/repos\/([^/]+)\/([^/]+)\/issues$/,
      reply: (m, req) => {
        const b = req.body as { title: string; body?: string; labels?: string[] };
        const issue = newIssue(`${m[1]}/${m[2]}`, {
          title: b.title,
          body: b.body ?? null,
          labels: (b.labels ?? []).map((name) => ({ name })),
        });
        return { status: 201, body: issueView(issue) };
      },
    },
    {
      method: 'GET',
      path: /^\/repos\/([^/]+)\/([^/]+)\/issues$/,
      reply: (m, req) => {
        const state = req.query.get('state') ?? 'open';
        const labels = req.query.get('labels')?.split(',').filter(Boolean) ?? [];
        const perPage = Number(req.query.get('per_page') ?? 30);
        const out = [...listOf(`${m[1]}/${m[2]}`)]
          .reverse()
          .filter((i) => state === 'all' || i.state === state)
          .filter((i) => labels.every((l) => i.labels.some((x) => x.name === l)))
          .slice(0, perPage);
        return { status: 200, body: out.map(issueView) };
      },
    },
    {
      method: 'GET',
      path: /^\/repos\/([^/]+)\/([^/]+)\/pulls$/,
      reply: (m, req) => {
        const state = req.query.get('state') ?? 'open';
        const perPage = Number(req.query.get('per_page') ?? 30);
        const out = [...listOf(`${m[1]}/${m[2]}`)]
          .reverse()
          .filter((i) => i.pull && (state === 'all' || i.state === state))
          .slice(0, perPage);
        return { status: 200, body: out.map(pullSimple) };
      },
    },
  ];

  /** Routes on one issue or pull request, found by its number. */
  const itemRoutes: { method: string; path: RegExp; reply: (i: GhIssue, req: FakeRequest) => Reply }[] = [
    { method: 'GET', path: /^\/issues\/\d+$/, reply: (i) => ({ status: 200, body: issueView(i) }) },
    {
      method: 'PATCH',
      path: /^\/issues\/\d+$/,
      reply: (i, req) => {
        const b = req.body as { title?: string; body?: string; assignees?: string[]; state?: string; state_reason?: string };
        if (b.state !== undefined && b.state !== 'open' && b.state !== 'closed')
          return validation('Validation Failed', [{ resource: 'Issue', code: 'invalid', field: 'state' }]);
        if (b.title !== undefined) i.title = b.title;
        if (b.body !== undefined) i.body = b.body;
        if (b.assignees !== undefined) i.assignees = b.assignees.map((login) => ({ login }));
        if (b.state !== undefined && b.state !== i.state) {
          i.state = b.state;
          // GitHub sets the reason on a state change only: given, or completed / reopened.
          i.state_reason = (b.state_reason ?? (i.state === 'closed' ? 'completed' : 'reopened')) as GhIssue['state_reason'];
        }
        return { status: 200, body: issueView(i) };
      },
    },
    {
      method: 'POST',
      path: /^\/issues\/\d+\/comments$/,
      reply: (i, req) => {
        const c = {
          id: 1000 + i.comments.length + 1,
          body: (req.body as { body: string }).body,
          html_url: `${i.html_url}#issuecomment-${i.comments.length + 1}`,
          created_at: new Date().toISOString(),
        };
        i.comments.push(c);
        return { status: 201, body: c };
      },
    },
    {
      method: 'POST',
      path: /^\/issues\/\d+\/labels$/,
      reply: (i, req) => {
        for (const name of (req.body as { labels: string[] }).labels) if (!i.labels.some((l) => l.name === name)) i.labels.push({ name });
        return { status: 200, body: i.labels };
      },
    },
    { method: 'GET', path: /^\/pulls\/\d+$/, reply: (i) => (i.pull ? { status: 200, body: pullFull(i) } : notFound()) },
    {
      method: 'PUT',
      path: /^\/pulls\/\d+\/merge$/,
      reply: (i, req) => {
        const p = i.pull;
        if (!p) return notFound();
        const b = (req.body ?? {}) as { merge_method?: string };
        if (p.headMoves) return { status: 409, body: { message: 'Head branch was modified. Review and try the merge again.' } };
        if (p.merged_at !== null || i.state !== 'open' || !p.mergeable)
          return { status: 405, body: { message: 'Pull Request is not mergeable', documentation_url: 'https://docs.github.com/rest' } };
        if (p.draft) return { status: 405, body: { message: 'Pull Request is still a draft' } };
        p.merged_at = new Date().toISOString();
        p.merge_commit_sha = `merge-${i.number}-${b.merge_method ?? 'merge'}`;
        i.state = 'closed';
        return { status: 200, body: { sha: p.merge_commit_sha, merged: true, message: 'Pull Request successfully merged' } };
      },
    },
  ];

  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        for (const r of routes) {
          const m = r.path.exec(req.path);
          if (m && r.method === req.method) return r.reply(m, req);
        }
        const item = /^\/repos\/([^/]+)\/([^/]+)(\/(?:issues|pulls)\/(\d+)(?:\/.*)?)$/.exec(req.path);
        if (!item) return notFound();
        const route = itemRoutes.find((r) => r.method === req.method && r.path.test(item[3]!));
        const issue = listOf(`${item[1]}/${item[2]}`).find((i) => i.number === Number(item[4]));
        if (!route || !issue) return notFound();
        return route.reply(issue, req);
      },
    },
    tokens,
  );
  const addPull: FakeGitHub['addPull'] = (repo, p) =>
    newIssue(repo, {
      title: p.title,
      pull: {
        head: p.head ?? `feature-${listOf(repo).length + 1}`,
        base: p.base ?? 'main',
        draft: p.draft ?? false,
        mergeable: p.mergeable ?? true,
        headMoves: p.headMoves ?? false,
        merged_at: null,
        merge_commit_sha: null,
      },
    });
  return Object.assign(fake, { issues, repos, addPull });
}
