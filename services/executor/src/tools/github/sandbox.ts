import { text, ToolError, type ActionImpl } from '../tool.js';
import { SANDBOX_HOST, sandboxScope } from '../../sandbox/sandbox-scope.js';

/** A simulated GitHub: any repository exists; issues, comments and labels persist per account and user. */
const full = (input: Record<string, unknown>) => `${text(input['owner'])}/${text(input['repo'])}`;

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
    return doc.data;
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
      .slice(0, Number(input['limit'] ?? 30));
    return { items, count: items.length };
  },
  comment_on_issue: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const repo = full(input);
    const issue = await ctx.env.sandbox.findBySeq(scope, 'issue', repo, Number(input['issue_number']));
    if (!issue) throw new ToolError('step_failed', `GitHub: not found (issue #${text(input['issue_number'])} in ${repo})`, false);
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
    const scope = await sandboxScope(ctx, 'github');
    const repo = full(input);
    const issue = await ctx.env.sandbox.findBySeq(scope, 'issue', repo, Number(input['issue_number']));
    if (!issue) throw new ToolError('step_failed', `GitHub: not found (issue #${text(input['issue_number'])} in ${repo})`, false);
    const labels = [...new Set([...((issue.data['labels'] as string[] | undefined) ?? []), ...(input['labels'] as string[])])];
    await ctx.env.sandbox.setData(issue._id, { ...issue.data, labels });
    return { issue_number: issue.seq, labels };
  },
  get_repository: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'github');
    const repo = full(input);
    const open = (await ctx.env.sandbox.list(scope, 'issue', repo)).filter((d) => d.data['state'] === 'open').length;
    return {
      full_name: repo,
      description: `Sandbox repository ${repo}`,
      default_branch: 'main',
      private: false,
      stars: 0,
      open_issues: open,
      url: `${SANDBOX_HOST}/github/${repo}`,
    };
  },
};
