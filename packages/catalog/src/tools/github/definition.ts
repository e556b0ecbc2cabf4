import { dateTime, int, limit, listOf, str, type ToolDef } from '../../types.js';

const owner = str({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'Repository owner (user or organisation)' });
const repo = str({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'Repository name' });
const issueNumber = int({ minimum: 1, description: 'Issue number' });
const labels = { type: 'array', items: str({ minLength: 1, maxLength: 50 }), maxItems: 100 } as const;
const pullNumber = int({ minimum: 1, description: 'Pull request number' });
const state = str({ enum: ['open', 'closed', 'all'], default: 'open' });
const nullableStr = { anyOf: [str(), { type: 'null' }] } as const;
const issueIn = (extra: Record<string, unknown> = {}, required: string[] = []) => ({
  type: 'object',
  properties: { owner, repo, issue_number: issueNumber, ...extra },
  required: ['owner', 'repo', 'issue_number', ...required],
  additionalProperties: false,
});
const pullIn = (extra: Record<string, unknown> = {}, required: string[] = []) => ({
  type: 'object',
  properties: { owner, repo, pull_number: pullNumber, ...extra },
  required: ['owner', 'repo', 'pull_number', ...required],
  additionalProperties: false,
});

export const githubIssue = {
  type: 'object',
  properties: {
    number: int(),
    title: str(),
    body: { anyOf: [str(), { type: 'null' }] },
    state: str({ enum: ['open', 'closed'] }),
    labels: { type: 'array', items: str() },
    url: str(),
    created_at: dateTime,
  },
  required: ['number', 'title', 'state', 'labels', 'url', 'created_at'],
} as const;

/** head and base are branch names; author is the opener's login. */
export const githubPullRequest = {
  type: 'object',
  properties: {
    number: int(),
    title: str(),
    body: nullableStr,
    state: str({ enum: ['open', 'closed'] }),
    draft: { type: 'boolean' },
    merged: { type: 'boolean' },
    author: nullableStr,
    head: str(),
    base: str(),
    url: str(),
    created_at: dateTime,
  },
  required: ['number', 'title', 'body', 'state', 'draft', 'merged', 'author', 'head', 'base', 'url', 'created_at'],
} as const;

export const githubRepository = {
  type: 'object',
  properties: { full_name: str(), description: nullableStr, private: { type: 'boolean' }, default_branch: str(), url: str() },
  required: ['full_name', 'description', 'private', 'default_branch', 'url'],
} as const;

export const GITHUB_TOOL: ToolDef = {
  name: 'github',
  description: 'GitHub issues, pull requests, comments, labels and repositories on behalf of the user.',
  service: 'github',
  keywords: [
    'github',
    'issue',
    'issues',
    'repo',
    'repos',
    'repository',
    'repositories',
    'label',
    'labels',
    'bug',
    'bugs',
    'gh',
    'pr',
    'prs',
    'pull',
    'pulls',
  ],
  actions: [
    {
      name: 'create_issue',
      description: 'Opens an issue in a repository.',
      keywords: ['create', 'open', 'file', 'new', 'raise', 'report', 'make'],
      input: {
        type: 'object',
        properties: { owner, repo, title: str({ minLength: 1, maxLength: 256 }), body: str({ maxLength: 65536 }), labels },
        required: ['owner', 'repo', 'title'],
        additionalProperties: false,
      },
      output: githubIssue,
      scopes: ['repo'],
      side_effect: 'write',
    },
    {
      name: 'list_issues',
      description: 'Lists the issues of a repository, newest first.',
      keywords: ['list', 'find', 'show', 'get', 'search', 'fetch', 'latest', 'last', 'recent', 'which', 'what'],
      input: {
        type: 'object',
        properties: { owner, repo, state: str({ enum: ['open', 'closed', 'all'], default: 'open' }), labels, limit: limit(100, 30) },
        required: ['owner', 'repo'],
        additionalProperties: false,
      },
      output: listOf(githubIssue),
      scopes: ['repo'],
      side_effect: 'read',
    },
    {
      name: 'comment_on_issue',
      description: 'Adds a comment to an issue.',
      keywords: ['comment', 'reply', 'respond', 'answer'],
      input: {
        type: 'object',
        properties: { owner, repo, issue_number: issueNumber, body: str({ minLength: 1, maxLength: 65536 }) },
        required: ['owner', 'repo', 'issue_number', 'body'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { id: int(), issue_number: int(), body: str(), url: str(), created_at: dateTime },
        required: ['id', 'issue_number', 'body', 'url', 'created_at'],
      },
      scopes: ['repo'],
      side_effect: 'write',
    },
    {
      name: 'add_labels',
      description: 'Adds labels to an issue; answers every label the issue has afterwards.',
      keywords: ['label', 'tag', 'mark'],
      input: {
        type: 'object',
        properties: { owner, repo, issue_number: issueNumber, labels: { ...labels, minItems: 1 } },
        required: ['owner', 'repo', 'issue_number', 'labels'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { issue_number: int(), labels: { type: 'array', items: str() } },
        required: ['issue_number', 'labels'],
      },
      scopes: ['repo'],
      side_effect: 'write',
    },
    {
      name: 'get_repository',
      description: 'Describes a repository: description, default branch, stars, open issues.',
      keywords: ['describe', 'info', 'details', 'stars', 'about', 'summary'],
      input: { type: 'object', properties: { owner, repo }, required: ['owner', 'repo'], additionalProperties: false },
      output: {
        type: 'object',
        properties: {
          full_name: str(),
          description: { anyOf: [str(), { type: 'null' }] },
          default_branch: str(),
          private: { type: 'boolean' },
          stars: int(),
          open_issues: int(),
          url: str(),
        },
        required: ['full_name', 'description', 'default_branch', 'private', 'stars', 'open_issues', 'url'],
      },
      scopes: ['repo'],
      side_effect: 'read',
    },
    {
      name: 'get_issue',
      description: 'Reads one issue of a repository.',
      keywords: ['get', 'show', 'read', 'view', 'fetch', 'details'],
      input: issueIn(),
      output: githubIssue,
      scopes: ['repo'],
      side_effect: 'read',
    },
    {
      name: 'close_issue',
      description: 'Closes an issue, as completed (the default) or as not planned.',
      keywords: ['close', 'resolve', 'finish', 'done', 'wontfix'],
      input: issueIn({ reason: str({ enum: ['completed', 'not_planned'], default: 'completed' }) }),
      output: githubIssue,
      scopes: ['repo'],
      side_effect: 'write',
    },
    {
      name: 'reopen_issue',
      description: 'Reopens a closed issue.',
      keywords: ['reopen', 'restore', 'revive'],
      input: issueIn(),
      output: githubIssue,
      scopes: ['repo'],
      side_effect: 'write',
    },
    {
      name: 'update_issue',
      description: "Changes an issue's title, body or assignees (assignees replace the current ones).",
      keywords: ['update', 'edit', 'change', 'rename', 'assign', 'retitle'],
      input: {
        ...issueIn({
          title: str({ minLength: 1, maxLength: 256 }),
          body: str({ maxLength: 65536 }),
          assignees: { type: 'array', items: str({ minLength: 1, maxLength: 39 }), maxItems: 10, description: 'GitHub logins' },
        }),
        anyOf: [{ required: ['title'] }, { required: ['body'] }, { required: ['assignees'] }],
      },
      output: githubIssue,
      scopes: ['repo'],
      side_effect: 'write',
    },
    {
      name: 'list_pull_requests',
      description: 'Lists the pull requests of a repository, newest first.',
      keywords: ['list', 'find', 'show', 'which', 'what', 'latest', 'recent'],
      input: {
        type: 'object',
        properties: { owner, repo, state, limit: limit(100, 30) },
        required: ['owner', 'repo'],
        additionalProperties: false,
      },
      output: listOf(githubPullRequest),
      scopes: ['repo'],
      side_effect: 'read',
    },
    {
      name: 'get_pull_request',
      description: 'Reads one pull request: state, draft, merged, branches.',
      keywords: ['get', 'show', 'read', 'view', 'fetch', 'details', 'status'],
      input: pullIn(),
      output: githubPullRequest,
      scopes: ['repo'],
      side_effect: 'read',
    },
    {
      name: 'comment_on_pull_request',
      description: 'Adds a comment to a pull request (its conversation, not a code review).',
      keywords: ['comment', 'reply', 'respond', 'answer'],
      input: pullIn({ body: str({ minLength: 1, maxLength: 65536 }) }, ['body']),
      output: {
        type: 'object',
        properties: { id: int(), pull_number: int(), body: str(), url: str(), created_at: dateTime },
        required: ['id', 'pull_number', 'body', 'url', 'created_at'],
      },
      scopes: ['repo'],
      side_effect: 'write',
    },
    {
      name: 'merge_pull_request',
      description: 'Merges a pull request into its base branch (merge commit by default, or squash or rebase).',
      keywords: ['merge', 'land', 'ship', 'squash', 'rebase'],
      input: pullIn({ merge_method: str({ enum: ['merge', 'squash', 'rebase'], default: 'merge' }) }),
      output: {
        type: 'object',
        properties: { pull_number: int(), merged: { type: 'boolean' }, sha: str(), message: str() },
        required: ['pull_number', 'merged', 'sha', 'message'],
      },
      scopes: ['repo'],
      side_effect: 'destructive',
    },
    {
      name: 'search_repositories',
      description: "Searches repositories with GitHub's search syntax (words, user:, org:, language:).",
      keywords: ['search', 'find', 'look', 'discover', 'which'],
      input: {
        type: 'object',
        properties: { query: str({ minLength: 1, maxLength: 256 }), limit: limit(100, 10) },
        required: ['query'],
        additionalProperties: false,
      },
      output: listOf({
        type: 'object',
        properties: {
          full_name: str(),
          description: nullableStr,
          stars: int(),
          language: nullableStr,
          private: { type: 'boolean' },
          url: str(),
        },
        required: ['full_name', 'description', 'stars', 'language', 'private', 'url'],
      }),
      scopes: ['repo'],
      side_effect: 'read',
    },
    {
      name: 'create_repository',
      description: 'Creates a repository for the user, or in an organisation; private unless said otherwise.',
      keywords: ['create', 'new', 'make', 'start', 'init'],
      input: {
        type: 'object',
        properties: {
          name: str({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'Repository name' }),
          description: str({ maxLength: 350 }),
          private: { type: 'boolean', default: true },
          org: { ...owner, description: 'Organisation to create it in (default: the user)' },
        },
        required: ['name'],
        additionalProperties: false,
      },
      output: githubRepository,
      scopes: ['repo'],
      side_effect: 'write',
    },
  ],
};
