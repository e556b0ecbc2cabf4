import { findAction } from '@tes/catalog';
import { compile } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startHarness, type Harness } from '../../test-support/harness.js';

/**
 * The simulated GitHub behind test keys, for the issue, pull request and repository actions:
 * state kept per account and user in the executor's database, exactly once per idempotency key.
 */
describe('GitHub sandbox (test keys)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  const run = (s: Parameters<Harness['step']>[0]) => runStep(h.step(s), h.deps());
  /** Runs a step that must complete; its output checked against the catalog schema. */
  async function ok(user: string, action: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await run({ tool: 'github', action, user_id: user, input });
    expect(res).toMatchObject({ outcome: 'complete' });
    const check = compile(findAction('github', action)?.output ?? {});
    expect({ valid: check(res.output), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
    return res.output ?? {};
  }
  const repo = { owner: 'acme', repo: 'api' };

  it('closes, lists as closed, reopens, updates and reads an issue', async () => {
    const u = 'u_close';
    await ok(u, 'create_issue', { ...repo, title: 'Crash on save' });
    await ok(u, 'create_issue', { ...repo, title: 'Typo' });
    expect(await ok(u, 'close_issue', { ...repo, issue_number: 1, reason: 'not_planned' })).toMatchObject({ number: 1, state: 'closed' });
    expect(await ok(u, 'list_issues', repo)).toMatchObject({ count: 1, items: [{ number: 2 }] });
    expect(await ok(u, 'list_issues', { ...repo, state: 'closed' })).toMatchObject({
      count: 1,
      items: [{ number: 1, title: 'Crash on save', state: 'closed' }],
    });
    expect(await ok(u, 'get_repository', repo)).toMatchObject({ open_issues: 1 });

    expect(await ok(u, 'reopen_issue', { ...repo, issue_number: 1 })).toMatchObject({ state: 'open' });
    const updated = await ok(u, 'update_issue', { ...repo, issue_number: 1, title: 'Crash on save (Safari)', assignees: ['mona'] });
    expect(updated).toEqual({
      number: 1,
      title: 'Crash on save (Safari)',
      body: null,
      state: 'open',
      labels: [],
      url: expect.stringContaining('/github/acme/api/issues/1'),
      created_at: expect.any(String),
    });
    expect(await ok(u, 'get_issue', { ...repo, issue_number: 1 })).toEqual(updated);
    // Another user's world has no such issue.
    const other = await run({ tool: 'github', action: 'close_issue', user_id: 'u_close_other', input: { ...repo, issue_number: 1 } });
    expect(other).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', message: 'GitHub: not found (issue #1 in acme/api)' } });
  });

  it('seeds three open pull requests per repository; comments on one and merges it, which closes it', async () => {
    const u = 'u_pulls';
    const list = await ok(u, 'list_pull_requests', repo);
    expect(list).toMatchObject({
      count: 3,
      items: [
        { number: 103, state: 'open', draft: false, merged: false },
        { number: 102, draft: true },
        { number: 101, title: 'Add CI workflow', head: 'ci-workflow', base: 'main' },
      ],
    });
    expect(await ok(u, 'list_pull_requests', { ...repo, limit: 1 })).toMatchObject({ count: 1, items: [{ number: 103 }] });
    const c = await ok(u, 'comment_on_pull_request', { ...repo, pull_number: 101, body: 'LGTM' });
    expect(c).toMatchObject({ pull_number: 101, body: 'LGTM' });

    const merged = await ok(u, 'merge_pull_request', { ...repo, pull_number: 101, merge_method: 'squash' });
    expect(merged).toMatchObject({ pull_number: 101, merged: true, message: 'Pull Request successfully merged' });
    expect(merged['sha']).toMatch(/^[0-9a-f]{40}$/);
    expect(await ok(u, 'get_pull_request', { ...repo, pull_number: 101 })).toMatchObject({ state: 'closed', merged: true });
    expect(await ok(u, 'list_pull_requests', repo)).toMatchObject({ count: 2, items: [{ number: 103 }, { number: 102 }] });
    expect(await ok(u, 'list_pull_requests', { ...repo, state: 'closed' })).toMatchObject({
      count: 1,
      items: [{ number: 101, merged: true }],
    });
    // A second merge of the same pull request by another step is refused: it is merged already.
    const again = await run({ tool: 'github', action: 'merge_pull_request', user_id: u, input: { ...repo, pull_number: 101 } });
    expect(again).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', message: expect.stringContaining('already merged') } });
  });

  it('refuses to merge the conflicting and the draft pull request, with what to do', async () => {
    const conflict = await run({ tool: 'github', action: 'merge_pull_request', user_id: 'u_refuse', input: { ...repo, pull_number: 103 } });
    expect(conflict).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        recoverable: false,
        message: 'GitHub refused to merge pull request #103 in acme/api (HTTP 405): Pull Request is not mergeable',
        suggestion: expect.stringContaining('resolve its conflicts'),
      },
    });
    const draft = await run({ tool: 'github', action: 'merge_pull_request', user_id: 'u_refuse', input: { ...repo, pull_number: 102 } });
    expect(draft).toMatchObject({ outcome: 'failed', error: { suggestion: expect.stringContaining('ready for review') } });
    const missing = await run({ tool: 'github', action: 'get_pull_request', user_id: 'u_refuse', input: { ...repo, pull_number: 7 } });
    expect(missing).toMatchObject({ outcome: 'failed', error: { message: 'GitHub: not found (pull request #7 in acme/api)' } });
  });

  it('merges exactly once: the same step re-run after losing its record answers its own merge', async () => {
    const step = h.step({ tool: 'github', action: 'merge_pull_request', user_id: 'u_merge_once', input: { ...repo, pull_number: 101 } });
    const first = await runStep(step, h.deps());
    expect(first).toMatchObject({ outcome: 'complete', output: { pull_number: 101, merged: true } });
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
    const rerun = await runStep(step, h.deps());
    expect(rerun.outcome).toBe('complete');
    expect(rerun.output).toEqual(first.output);
  });

  it('creates a repository (private by default) that search then finds, once per step; a taken name is refused', async () => {
    const u = 'u_repo';
    const step = h.step({
      tool: 'github',
      action: 'create_repository',
      user_id: u,
      input: { name: 'Rocket', description: 'Rocket firmware' },
    });
    const created = await runStep(step, h.deps());
    expect(created.output).toEqual({
      full_name: 'u-repo/Rocket',
      description: 'Rocket firmware',
      private: true,
      default_branch: 'main',
      url: expect.stringContaining('/github/u-repo/Rocket'),
    });
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
    expect((await runStep(step, h.deps())).output).toEqual(created.output);

    expect(await ok(u, 'search_repositories', { query: 'rocket' })).toMatchObject({
      count: 1,
      items: [{ full_name: 'u-repo/Rocket', description: 'Rocket firmware', private: true, stars: 0 }],
    });
    expect(await ok(u, 'get_repository', { owner: 'u-repo', repo: 'Rocket' })).toMatchObject({
      private: true,
      description: 'Rocket firmware',
    });
    expect(await ok('u_repo_other', 'search_repositories', { query: 'rocket' })).toEqual({ items: [], count: 0 });

    const taken = await run({ tool: 'github', action: 'create_repository', user_id: u, input: { name: 'rocket' } });
    expect(taken).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        message: expect.stringContaining('name already exists'),
        suggestion: expect.stringContaining('choose another name'),
      },
    });
    expect(await ok(u, 'create_repository', { name: 'site', org: 'acme', private: false })).toMatchObject({
      full_name: 'acme/site',
      private: false,
    });
    expect(await ok(u, 'search_repositories', { query: 'org:acme' })).toMatchObject({
      items: [{ full_name: 'acme/api' }, { full_name: 'acme/web' }, { full_name: 'acme/infra' }, { full_name: 'acme/site' }],
    });
    expect(await ok(u, 'search_repositories', { query: 'typescript language:typescript' })).toEqual({ items: [], count: 0 });
    expect(await ok(u, 'search_repositories', { query: 'acme language:typescript', limit: 1 })).toMatchObject({
      count: 1,
      items: [{ full_name: 'acme/api', stars: 120, language: 'TypeScript' }],
    });
  });
});
