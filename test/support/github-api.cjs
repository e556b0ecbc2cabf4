// A fake GitHub REST API v3 for the end-to-end OAuth task test, plugged into the vault's real
// authorization server (services/oauth-vault/test/oidc-server.cjs, env OIDC_EXTENSION):
//  - `GET /github/repos/:owner/:repo/issues` (issues and one pull request, as GitHub lists them;
//    state, labels, per_page, direction) and `GET /github/repos/:owner/:repo`, accepting ONLY live
//    access tokens of that server carrying the `repo` scope: 401 `Bad credentials` otherwise, 403
//    with X-Accepted-OAuth-Scopes without `repo`;
//  - `GET /_test/issued`: every access and refresh token the token endpoint handed out and every
//    bearer token the API saw, so a test can search everything the service emitted for them;
//  - `GET /_test/github-calls`: the API calls (method, path, query, outcome, headers seen).
'use strict';

exports.create = ({ provider, issuer }) => {
  const issued = { access_tokens: [], refresh_tokens: [], bearer_tokens_seen: [] };
  const githubCalls = [];

  // The fake GitHub REST API v3 (https://docs.github.com/rest): only this server's live tokens.
  const GH_DOC = 'https://docs.github.com/rest';
  const ghIssue = (owner, repo, n, title, extra = {}) => ({
    id: 1000 + n,
    node_id: `I_${n}`,
    url: `${issuer}/github/repos/${owner}/${repo}/issues/${n}`,
    html_url: `https://github.com/${owner}/${repo}/issues/${n}`,
    number: n,
    title,
    body: `Body of ${title}`,
    state: 'open',
    labels: [],
    user: { login: 'octocat', id: 1 },
    comments: 0,
    created_at: new Date(Date.UTC(2025, 0, n)).toISOString(),
    updated_at: new Date(Date.UTC(2025, 0, n)).toISOString(),
    ...extra,
  });
  async function github(ctx) {
    const call = {
      method: ctx.method,
      path: ctx.path.slice('/github'.length),
      query: ctx.querystring,
      accept: ctx.get('accept'),
      api_version: ctx.get('x-github-api-version'),
      status: 0,
    };
    githubCalls.push(call);
    ctx.set('X-GitHub-Media-Type', 'github.v3; format=json');
    const m = /^Bearer (.+)$/.exec(ctx.get('authorization') ?? '');
    if (m) issued.bearer_tokens_seen.push(m[1]);
    const token = m ? await provider.AccessToken.find(m[1]) : undefined;
    const grant = token && !token.isExpired ? await provider.Grant.find(token.grantId) : undefined;
    if (!token || token.isExpired || !grant) {
      call.status = ctx.status = 401;
      ctx.body = { message: 'Bad credentials', documentation_url: GH_DOC, status: '401' };
      return;
    }
    const scopes = String(token.scope ?? '')
      .split(/\s+/)
      .filter(Boolean);
    ctx.set('X-OAuth-Scopes', scopes.join(', '));
    if (!scopes.includes('repo')) {
      ctx.set('X-Accepted-OAuth-Scopes', 'repo');
      call.status = ctx.status = 403;
      ctx.body = { message: 'Resource not accessible by integration', documentation_url: GH_DOC, status: '403' };
      return;
    }
    const r = /^\/github\/repos\/([^/]+)\/([^/]+)(\/issues)?$/.exec(ctx.path);
    if (!r || ctx.method !== 'GET') {
      call.status = ctx.status = 404;
      ctx.body = { message: 'Not Found', documentation_url: GH_DOC, status: '404' };
      return;
    }
    const [, owner, repo, issues] = r;
    if (!issues) {
      call.status = ctx.status = 200;
      ctx.body = {
        id: 42,
        name: repo,
        full_name: `${owner}/${repo}`,
        private: false,
        description: 'A repository of the fake GitHub API',
        default_branch: 'main',
        stargazers_count: 7,
        open_issues_count: 2,
        html_url: `https://github.com/${owner}/${repo}`,
      };
      return;
    }
    // GitHub lists pull requests among issues (with a `pull_request` key); labels are objects.
    const all = [
      ghIssue(owner, repo, 1, 'Login fails on Safari', { labels: [{ id: 1, name: 'bug', color: 'd73a4a' }] }),
      ghIssue(owner, repo, 2, 'Add dark mode'),
      ghIssue(owner, repo, 3, 'Bump dependencies', { pull_request: { url: `${issuer}/github/repos/${owner}/${repo}/pulls/3` } }),
      ghIssue(owner, repo, 4, 'Old crash', { state: 'closed', closed_at: '2025-01-05T00:00:00Z' }),
    ];
    const state = ctx.query.state ?? 'open';
    const labels = String(ctx.query.labels ?? '')
      .split(',')
      .filter(Boolean);
    const perPage = Math.min(100, Number(ctx.query.per_page ?? 30));
    let out = all
      .filter((i) => state === 'all' || i.state === state)
      .filter((i) => labels.every((l) => i.labels.some((x) => x.name === l)));
    out.sort((a, b) => (ctx.query.direction === 'asc' ? a.number - b.number : b.number - a.number));
    out = out.slice(0, perPage);
    call.status = ctx.status = 200;
    ctx.body = out;
  }

  return {
    async route(ctx) {
      if (ctx.path === '/_test/issued' && ctx.method === 'GET') {
        ctx.body = issued;
        return true;
      }
      if (ctx.path === '/_test/github-calls' && ctx.method === 'GET') {
        ctx.body = { calls: githubCalls };
        return true;
      }
      if (ctx.path === '/github' || ctx.path.startsWith('/github/')) {
        await github(ctx);
        return true;
      }
      return false;
    },
    onToken(body) {
      if (!body || typeof body !== 'object') return;
      if (typeof body.access_token === 'string') issued.access_tokens.push(body.access_token);
      if (typeof body.refresh_token === 'string') issued.refresh_tokens.push(body.refresh_token);
    },
  };
};
