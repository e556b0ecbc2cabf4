import { findAction } from '@tes/catalog';
import { compile, type StepRun } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startFakeVault, type FakeVault } from '../../test-support/fake-vault.js';
import { startHarness, type Harness } from '../../test-support/harness.js';
import { FAKE_LOGIN, startFakeGitHub, type FakeGitHub } from './fake.js';

/**
 * The GitHub actions beyond issues' create/list/comment/label with live keys: real HTTP to a
 * fake GitHub speaking its REST wire format, the token from a stand-in vault over the real
 * broker. Each test checks what GitHub receives (method, path, body) and that the output
 * fits the catalog's output schema.
 */
describe('GitHub live actions against a fake GitHub', () => {
  let h: Harness;
  let vault: FakeVault;
  let github: FakeGitHub;

  beforeAll(async () => {
    h = await startHarness();
    vault = await startFakeVault(h.broker);
    vault.answer = () => ({ status: 'ok', access_token: 'tok-valid' });
    github = await startFakeGitHub();
  });
  afterAll(async () => {
    await github?.close();
    await h?.close();
  });

  type StepInput = Partial<StepRun> & Pick<StepRun, 'action' | 'input'>;
  const live = (s: StepInput) =>
    runStep(
      h.step({ environment: 'live', tool: 'github', ...s }),
      h.deps({ providerUrls: { ...h.deps().settings.providerUrls, github: github.url } }),
    );
  /** The output checked against the catalog schema, then handed back for more assertions. */
  async function ok(action: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await live({ action, input });
    expect(res).toMatchObject({ outcome: 'complete' });
    const check = compile(findAction('github', action)?.output ?? {});
    expect({ valid: check(res.output), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
    return res.output ?? {};
  }
  const last = () => github.requests[github.requests.length - 1]!;

  it('get_issue, close_issue (with its reason), reopen_issue and update_issue: GET and PATCH on the issue', async () => {
    await ok('create_issue', { owner: 'acme', repo: 'life', title: 'Flaky login' });
    expect(await ok('get_issue', { owner: 'acme', repo: 'life', issue_number: 1 })).toMatchObject({
      number: 1,
      title: 'Flaky login',
      state: 'open',
    });
    expect(last()).toMatchObject({ method: 'GET', path: '/repos/acme/life/issues/1' });

    expect(await ok('close_issue', { owner: 'acme', repo: 'life', issue_number: 1, reason: 'not_planned' })).toMatchObject({
      state: 'closed',
    });
    expect(last()).toMatchObject({
      method: 'PATCH',
      path: '/repos/acme/life/issues/1',
      body: { state: 'closed', state_reason: 'not_planned' },
    });
    expect(last().headers['idempotency-key']).toMatch(/^task_.+:0$/);
    expect(github.issues.get('acme/life')?.[0]?.state_reason).toBe('not_planned');
    await ok('reopen_issue', { owner: 'acme', repo: 'life', issue_number: 1 });
    expect(last()).toMatchObject({ method: 'PATCH', body: { state: 'open', state_reason: 'reopened' } });
    await ok('close_issue', { owner: 'acme', repo: 'life', issue_number: 1 });
    expect(last().body).toEqual({ state: 'closed', state_reason: 'completed' });

    const updated = await ok('update_issue', {
      owner: 'acme',
      repo: 'life',
      issue_number: 1,
      title: 'Login flaky on Safari',
      assignees: ['mona'],
    });
    expect(updated).toMatchObject({ title: 'Login flaky on Safari', state: 'closed' });
    expect(last()).toMatchObject({ method: 'PATCH', path: '/repos/acme/life/issues/1' });
    expect(last().body).toEqual({ title: 'Login flaky on Safari', assignees: ['mona'] });
    expect(github.issues.get('acme/life')?.[0]?.assignees).toEqual([{ login: 'mona' }]);
  });

  it('update_issue needs one of title, body or assignees (checked before GitHub is called)', async () => {
    const before = github.requests.length;
    const res = await live({ action: 'update_issue', input: { owner: 'acme', repo: 'life', issue_number: 1 } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', message: expect.stringContaining('invalid input') } });
    expect(github.requests.length).toBe(before);
  });

  it('list_pull_requests and get_pull_request: GET /pulls (newest first, merged from merged_at) and /pulls/{n}', async () => {
    github.addPull('acme/prs', { title: 'Add CI', head: 'ci' });
    github.addPull('acme/prs', { title: 'Draft docs', head: 'docs', draft: true });
    const list = await ok('list_pull_requests', { owner: 'acme', repo: 'prs', limit: 5 });
    expect(list).toMatchObject({
      count: 2,
      items: [
        { number: 2, title: 'Draft docs', draft: true, merged: false, head: 'docs', base: 'main', author: FAKE_LOGIN },
        { number: 1, title: 'Add CI', draft: false, state: 'open' },
      ],
    });
    expect(last()).toMatchObject({ method: 'GET', path: '/repos/acme/prs/pulls' });
    expect(Object.fromEntries(last().query)).toMatchObject({ state: 'open', per_page: '5' });
    expect(last().headers['idempotency-key']).toBeUndefined();

    const one = await ok('get_pull_request', { owner: 'acme', repo: 'prs', pull_number: 1 });
    expect(one).toMatchObject({ number: 1, title: 'Add CI', head: 'ci', url: 'https://github.com/acme/prs/pull/1' });
    expect(last()).toMatchObject({ method: 'GET', path: '/repos/acme/prs/pulls/1' });
  });

  it('comment_on_pull_request goes through the issues comments endpoint', async () => {
    github.addPull('acme/talk', { title: 'Feature' });
    const c = await ok('comment_on_pull_request', { owner: 'acme', repo: 'talk', pull_number: 1, body: 'Looks good' });
    expect(c).toMatchObject({ pull_number: 1, body: 'Looks good' });
    expect(last()).toMatchObject({ method: 'POST', path: '/repos/acme/talk/issues/1/comments', body: { body: 'Looks good' } });
  });

  it('merge_pull_request: PUT /pulls/{n}/merge with the merge method; the pull request is merged after', async () => {
    github.addPull('acme/ship', { title: 'Ready' });
    const merged = await ok('merge_pull_request', { owner: 'acme', repo: 'ship', pull_number: 1, merge_method: 'squash' });
    expect(merged).toEqual({ pull_number: 1, merged: true, sha: 'merge-1-squash', message: 'Pull Request successfully merged' });
    expect(last()).toMatchObject({ method: 'PUT', path: '/repos/acme/ship/pulls/1/merge', body: { merge_method: 'squash' } });
    expect(last().headers['idempotency-key']).toMatch(/^task_.+:0$/);
    expect(await ok('get_pull_request', { owner: 'acme', repo: 'ship', pull_number: 1 })).toMatchObject({ state: 'closed', merged: true });
    const closed = await ok('list_pull_requests', { owner: 'acme', repo: 'ship', state: 'closed' });
    expect(closed).toMatchObject({ count: 1, items: [{ number: 1, merged: true }] });
  });

  it('merge_pull_request of a pull request that cannot be merged (GitHub 405): step_failed, not retried, with what to do', async () => {
    github.addPull('acme/clash', { title: 'Conflicting', mergeable: false });
    const before = github.requests.length;
    const res = await live({ action: 'merge_pull_request', input: { owner: 'acme', repo: 'clash', pull_number: 1 } });
    expect(res).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        tool: 'github',
        recoverable: false,
        message: 'GitHub refused to merge pull request #1 in acme/clash (HTTP 405): Pull Request is not mergeable',
        suggestion: expect.stringContaining('resolve its conflicts'),
      },
    });
    expect(github.requests.length - before).toBe(1);
    expect(github.issues.get('acme/clash')?.[0]?.state).toBe('open');
  });

  it('merge_pull_request when the head moved (GitHub 409): step_failed suggesting to review and retry', async () => {
    github.addPull('acme/moved', { title: 'Moving', headMoves: true });
    const res = await live({ action: 'merge_pull_request', input: { owner: 'acme', repo: 'moved', pull_number: 1 } });
    expect(res).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        message: expect.stringContaining('(HTTP 409)'),
        suggestion: expect.stringContaining('review its latest commits'),
      },
    });
  });

  it('search_repositories: GET /search/repositories with q and per_page; stars and url from GitHub’s fields', async () => {
    github.repos.set('acme/rocket', {
      full_name: 'acme/rocket',
      description: 'Rocket engine firmware',
      private: false,
      default_branch: 'main',
      stargazers_count: 99,
      language: 'Rust',
      html_url: 'https://github.com/acme/rocket',
    });
    const found = await ok('search_repositories', { query: 'rocket org:acme', limit: 3 });
    expect(found).toEqual({
      count: 1,
      items: [
        {
          full_name: 'acme/rocket',
          description: 'Rocket engine firmware',
          stars: 99,
          language: 'Rust',
          private: false,
          url: 'https://github.com/acme/rocket',
        },
      ],
    });
    expect(last()).toMatchObject({ method: 'GET', path: '/search/repositories' });
    expect(Object.fromEntries(last().query)).toEqual({ q: 'rocket org:acme', per_page: '3' });
  });

  it('create_repository: POST /user/repos, private by default; POST /orgs/{org}/repos for an organisation', async () => {
    const mine = await ok('create_repository', { name: 'notes', description: 'My notes' });
    expect(mine).toEqual({
      full_name: `${FAKE_LOGIN}/notes`,
      description: 'My notes',
      private: true,
      default_branch: 'main',
      url: `https://github.com/${FAKE_LOGIN}/notes`,
    });
    expect(last()).toMatchObject({ method: 'POST', path: '/user/repos', body: { name: 'notes', description: 'My notes', private: true } });
    expect(last().headers['idempotency-key']).toMatch(/^task_.+:0$/);

    const team = await ok('create_repository', { name: 'site', org: 'acme', private: false });
    expect(team).toMatchObject({ full_name: 'acme/site', private: false, description: null });
    expect(last()).toMatchObject({ method: 'POST', path: '/orgs/acme/repos', body: { name: 'site', private: false } });
    expect(await ok('search_repositories', { query: 'notes' })).toMatchObject({
      count: 1,
      items: [{ full_name: `${FAKE_LOGIN}/notes`, private: true }],
    });
  });

  it('create_repository with a name already taken (GitHub 422): step_failed naming it, suggesting another name', async () => {
    await ok('create_repository', { name: 'taken' });
    const res = await live({ action: 'create_repository', input: { name: 'taken' } });
    expect(res).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        recoverable: false,
        message:
          'GitHub refused to create the repository taken (HTTP 422): Repository creation failed. (name already exists on this account)',
        suggestion: 'A repository named taken already exists on this account: choose another name, or use the existing one',
      },
    });
  });

  it('a search GitHub rejects (422 Validation Failed) is step_failed with the field, suggesting to check the query', async () => {
    const res = await live({ action: 'search_repositories', input: { query: '   ' } });
    expect(res).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'step_failed',
        message: expect.stringContaining('(HTTP 422): Validation Failed (q: missing)'),
        suggestion: expect.stringContaining('search query'),
      },
    });
  });

  it('a pull request that does not exist: step_failed not found', async () => {
    const res = await live({ action: 'get_pull_request', input: { owner: 'acme', repo: 'none', pull_number: 9 } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', message: 'GitHub: not found (Not Found)' } });
  });
});
