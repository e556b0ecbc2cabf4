import { createHash } from 'node:crypto';
import { text, ToolError, type ActionImpl, type ToolContext } from '../tool.js';
import { SANDBOX_HOST, sandboxScope } from '../sandbox-scope.js';
import type { SandboxDoc } from '../../domain/sandbox.js';

/**
 * A simulated GitHub: any repository exists; issues, comments, labels, pull requests and
 * created repositories persist per account and user. Each repository has three open pull
 * requests from its first use: #101 mergeable, #102 a draft, #103 with conflicts (so a
 * refused merge can be tried with test keys). Search finds a few public repositories and
 * the ones the user created.
 */
const full = (input: Record<string, unknown>) => `${text(input['owner'])}/${text(input['repo'])}`;
const ISSUE_FIELDS = ['number', 'title', 'body', 'state', 'labels', 'url', 'created_at'] as const;
const PULL_FIELDS = ['number', 'title', 'body', 'state', 'draft', 'merged', 'author', 'head', 'base', 'url', 'created_at'] as const;

/** What the catalog's output shows of a stored object (it also keeps state_reason, assignees, merge details). */
const view = (data: Record<string, unknown>, fields: readonly string[]) => Object.fromEntries(fields.map((f) => [f, data[f]]));

const notFound = (what: string, repo: string) => new ToolError('step_failed', `GitHub: not found (${what} in ${repo})`, false);

async function issueDoc(ctx: ToolContext, input: Record<string, unknown>): Promise<{ scope: string; repo: string; doc: SandboxDoc }> {
  const scope = await sandboxScope(ctx, 'github');
  const repo = full(input);
  const doc = await ctx.env.sandbox.findBySeq(scope, 'issue', repo, Number(input['issue_number']));
  if (!doc) throw notFound(`issue #${text(input['issue_number'])}`, repo);
  return { scope, repo, doc };
}

/** Changes an issue; changing it to what it already is changes nothing, so a re-run is harmless. */
async function changeIssue(ctx: ToolContext, input: Record<string, unknown>, change: Record<string, unknown>) {
  const { doc } = await issueDoc(ctx, input);
  const data = { ...doc.data, ...change };
  await ctx.env.sandbox.setData(doc._id, data);
  return view(data, ISSUE_FIELDS);
}

const SEEDED_PULLS = [
  { number: 101, title: 'Add CI workflow', head: 'ci-workflow', draft: false, mergeable: true, created_at: '2024-05-01T09:00:00.000Z' },
  { number: 102, title: 'Update README', head: 'docs-readme', draft: true, mergeable: true, created_at: '2024-05-02T09:00:00.000Z' },
  {
    number: 103,
    title: 'Refactor auth module',
    head: 'auth-refactor',
    draft: false,
    mergeable: false,
    created_at: '2024-05-03T09:00:00.000Z',
  },
];

/** The repository's pull requests, newest first; seeded on first use (by fixed keys, so concurrent first uses agree). */
async function pulls(ctx: ToolContext, scope: string, repo: string): Promise<SandboxDoc[]> {
  let docs = await ctx.env.sandbox.list(scope, 'pull', repo);
  if (docs.length === 0) {
    for (const p of SEEDED_PULLS) {
      await ctx.env.sandbox.createOnce(scope, 'pull', repo, `seed:${repo}#${p.number}`, () => ({
        ...p,
        body: `Sandbox pull request #${p.number}`,
        state: 'open',
        merged: false,
        author: 'sandbox-dev',
        base: 'main',
        url: `${SANDBOX_HOST}/github/${repo}/pull/${p.number}`,
      }));
    }
    docs = await ctx.env.sandbox.list(scope, 'pull', repo);
  }
  return docs.sort((a, b) => Number(b.data['number']) - Number(a.data['number']));
}

async function pullDoc(ctx: ToolContext, input: Record<string, unknown>): Promise<{ scope: string; repo: string; doc: SandboxDoc }> {
  const scope = await sandboxScope(ctx, 'github');
  const repo = full(input);
  const doc = (await pulls(ctx, scope, repo)).find((d) => d.data['number'] === Number(input['pull_number']));
  if (!doc) throw notFound(`pull request #${text(input['pull_number'])}`, repo);
  return { scope, repo, doc };
}

const SEEDED_REPOS = [
  { full_name: 'octocat/Hello-World', description: 'My first repository on GitHub!', stars: 2600, language: null },
  { full_name: 'acme/api', description: 'The Acme HTTP API', stars: 120, language: 'TypeScript' },
  { full_name: 'acme/web', description: 'The Acme web app', stars: 85, language: 'TypeScript' },
  { full_name: 'acme/infra', description: "Terraform for Acme's cloud", stars: 12, language: 'HCL' },
].map((r) => ({ ...r, private: false, url: `${SANDBOX_HOST}/github/${r.full_name}` }));

type RepoHit = (typeof SEEDED_REPOS)[number] | Record<string, unknown>;

/** GitHub's search syntax, the part the sandbox knows: words (name or description), user:, org:, language:, is:. */
function matches(query: string, r: RepoHit): boolean {
  const hay = `${text(r['full_name'])} ${text(r['description'])}`.toLowerCase();
  const owner = text(r['full_name']).split('/')[0]?.toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((t) => {
      const [k, v] = t.includes(':') ? [t.slice(0, t.indexOf(':')), t.slice(t.indexOf(':') + 1)] : [undefined, t];
      if (k === 'user' || k === 'org') return owner === v;
      if (k === 'language') return text(r['language']).toLowerCase() === v;
      if (k === 'is') return v === (r['private'] ? 'private' : 'public');
      if (k !== undefined) return true;
      return hay.includes(v);
    });
}

/** The user's login in the sandbox: their user id, in the characters a login may have. */
const login = (ctx: ToolContext) => (ctx.step.user_id ?? 'sandbox-user').replace(/[^A-Za-z0-9-]/g, '-');

export const githubSandbox: Record<string, ActionImpl> = {
  create_issue: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const repo = full(input);
    const doc = await ctx.env.sandbox.createOnce(scope, 'issue', repo, ctx.step.idempotency_key, (n) => ({
      number: n,
      title: input['title'],
      body: input['body'] ?? null,
      state: 'open',
      labels: [...new Set((input['labels'] as string[] | undefined) ?? [])],
      url: `${SANDBOX_HOST}/github/${repo}/issues/${n}`,
      created_at: new Date().toISOString(),
    }));
    return view(doc.data, ISSUE_FIELDS);
  },
  list_issues: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const state = (input['state'] as string | undefined) ?? 'open';
    const labels = (input['labels'] as string[] | undefined) ?? [];
    const all = await ctx.env.sandbox.list(scope, 'issue', full(input));
    const items = all
      .map((d) => d.data)
      .filter((i) => state === 'all' || i['state'] === state)
      .filter((i) => labels.every((l) => (i['labels'] as string[]).includes(l)))
      .slice(0, Number(input['limit'] ?? 30))
      .map((i) => view(i, ISSUE_FIELDS));
    return { items, count: items.length };
  },
  comment_on_issue: async (input, ctx) => {
    const { scope, repo, doc: issue } = await issueDoc(ctx, input);
    const doc = await ctx.env.sandbox.createOnce(scope, 'comment', `${repo}#${issue.seq}`, ctx.step.idempotency_key, (n) => ({
      id: issue.seq * 1000 + n,
      issue_number: issue.seq,
      body: input['body'],
      url: `${SANDBOX_HOST}/github/${repo}/issues/${issue.seq}#comment-${n}`,
      created_at: new Date().toISOString(),
    }));
    return doc.data;
  },
  add_labels: async (input, ctx) => {
    const { doc: issue } = await issueDoc(ctx, input);
    const labels = [...new Set([...((issue.data['labels'] as string[] | undefined) ?? []), ...(input['labels'] as string[])])];
    await ctx.env.sandbox.setData(issue._id, { ...issue.data, labels });
    return { issue_number: issue.seq, labels };
  },
  get_repository: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const repo = full(input);
    const open = (await ctx.env.sandbox.list(scope, 'issue', repo)).filter((d) => d.data['state'] === 'open').length;
    // A repository the user created here answers what they created.
    const created = (await ctx.env.sandbox.list(scope, 'repo', text(input['owner']))).find(
      (d) => text(d.data['full_name']).toLowerCase() === repo.toLowerCase(),
    )?.data;
    return {
      full_name: created?.['full_name'] ?? repo,
      description: created ? created['description'] : `Sandbox repository ${repo}`,
      default_branch: 'main',
      private: created?.['private'] ?? false,
      stars: 0,
      open_issues: open,
      url: `${SANDBOX_HOST}/github/${text(created?.['full_name'], repo)}`,
    };
  },
  get_issue: async (input, ctx) => view((await issueDoc(ctx, input)).doc.data, ISSUE_FIELDS),
  close_issue: (input, ctx) => changeIssue(ctx, input, { state: 'closed', state_reason: input['reason'] ?? 'completed' }),
  reopen_issue: (input, ctx) => changeIssue(ctx, input, { state: 'open', state_reason: 'reopened' }),
  update_issue: (input, ctx) =>
    changeIssue(
      ctx,
      input,
      Object.fromEntries(['title', 'body', 'assignees'].filter((k) => input[k] !== undefined).map((k) => [k, input[k]])),
    ),
  list_pull_requests: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const state = (input['state'] as string | undefined) ?? 'open';
    const items = (await pulls(ctx, scope, full(input)))
      .map((d) => d.data)
      .filter((p) => state === 'all' || p['state'] === state)
      .slice(0, Number(input['limit'] ?? 30))
      .map((p) => view(p, PULL_FIELDS));
    return { items, count: items.length };
  },
  get_pull_request: async (input, ctx) => view((await pullDoc(ctx, input)).doc.data, PULL_FIELDS),
  comment_on_pull_request: async (input, ctx) => {
    const { scope, repo, doc: pull } = await pullDoc(ctx, input);
    const n = Number(pull.data['number']);
    const doc = await ctx.env.sandbox.createOnce(scope, 'comment', `${repo}!pull${n}`, ctx.step.idempotency_key, (c) => ({
      id: n * 1000 + c,
      pull_number: n,
      body: input['body'],
      url: `${SANDBOX_HOST}/github/${repo}/pull/${n}#comment-${c}`,
      created_at: new Date().toISOString(),
    }));
    return doc.data;
  },
  merge_pull_request: async (input, ctx) => {
    const { repo, doc } = await pullDoc(ctx, input);
    const n = Number(doc.data['number']);
    const merge = doc.data['merge'] as { key: string; sha: string } | undefined;
    const message = 'Pull Request successfully merged';
    // The same step run again (its record lost) answers its own merge.
    if (merge?.key === ctx.step.idempotency_key) return { pull_number: n, merged: true, sha: merge.sha, message };
    const refuse = (why: string, suggestion: string) =>
      new ToolError('step_failed', `GitHub refused to merge pull request #${n} in ${repo} (HTTP 405): ${why}`, false, suggestion);
    if (doc.data['merged'])
      throw refuse('Pull Request is not mergeable: it is already merged', `Pull request #${n} is already merged: nothing to do`);
    if (doc.data['state'] !== 'open')
      throw refuse('Pull Request is not mergeable: it is closed', `Reopen pull request #${n} on GitHub first`);
    if (doc.data['draft']) throw refuse('Pull Request is still a draft', `Mark pull request #${n} ready for review on GitHub, then retry`);
    if (!doc.data['mergeable'])
      throw refuse(
        'Pull Request is not mergeable',
        `Pull request #${n} cannot be merged as it is: resolve its conflicts, required checks or reviews on GitHub (or try another merge_method), then retry`,
      );
    const method = text(input['merge_method'], 'merge');
    const sha = createHash('sha1').update(`${repo}#${n}:${method}`).digest('hex');
    await ctx.env.sandbox.setData(doc._id, {
      ...doc.data,
      state: 'closed',
      merged: true,
      merge: { key: ctx.step.idempotency_key, sha, method },
    });
    return { pull_number: n, merged: true, sha, message };
  },
  search_repositories: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const query = text(input['query']);
    const created = (await ctx.env.sandbox.list(scope, 'repo')).map((d) => ({
      full_name: d.data['full_name'],
      description: d.data['description'],
      stars: 0,
      language: null,
      private: d.data['private'],
      url: d.data['url'],
    }));
    const items = [...SEEDED_REPOS, ...created]
      .filter((r) => matches(query, r))
      .sort((a, b) => Number(b.stars) - Number(a.stars))
      .slice(0, Number(input['limit'] ?? 10));
    return { items, count: items.length };
  },
  create_repository: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const owner = text(input['org'], login(ctx));
    const name = text(input['name']);
    const fullName = `${owner}/${name}`;
    // Keyed by the name (GitHub's are case-insensitive): one repository per name; the step that made it gets it back.
    const doc = await ctx.env.sandbox.createOnce(scope, 'repo', owner, `name:${fullName.toLowerCase()}`, () => ({
      full_name: fullName,
      description: input['description'] ?? null,
      private: input['private'] ?? true,
      default_branch: 'main',
      url: `${SANDBOX_HOST}/github/${fullName}`,
      created_by: ctx.step.idempotency_key,
    }));
    if (doc.data['created_by'] !== ctx.step.idempotency_key) {
      throw new ToolError(
        'step_failed',
        `GitHub refused to create the repository ${name} (HTTP 422): Repository creation failed.; name already exists on this account`,
        false,
        `A repository named ${name} already exists ${input['org'] ? `in ${owner}` : 'on this account'}: choose another name, or use the existing one`,
      );
    }
    return view(doc.data, ['full_name', 'description', 'private', 'default_branch', 'url']);
  },
};
