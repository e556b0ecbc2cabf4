import { dateTime, int, limit, listOf, str, type ToolDef } from '../../types.js';

const owner = str({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'Repository owner (user or organisation)' });
const repo = str({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.-]+$', description: 'Repository name' });
const issueNumber = int({ minimum: 1, description: 'Issue number' });
const labels = { type: 'array', items: str({ minLength: 1, maxLength: 50 }), maxItems: 100 } as const;

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

export const GITHUB_TOOL: ToolDef = {
  name: 'github',
  description: 'GitHub issues, comments, labels and repositories on behalf of the user.',
  service: 'github',
  keywords: ['github', 'issue', 'issues', 'repo', 'repos', 'repository', 'repositories', 'label', 'labels', 'bug', 'bugs', 'gh'],
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
  ],
};
