import type { ToolHints } from '../../types.js';

const ISSUE = ['issue', 'bug', 'ticket', '@number'];
const PR = ['pull request', 'pr', 'merge request', 'mr'];

export const GITHUB_HINTS: ToolHints = {
  nouns: ['github', 'gh', 'repo', 'repository', 'issue', 'bug', 'ticket', 'pull request', 'pr', '@repo'],
  actions: {
    create_issue: {
      verbs: ['create', 'open', 'file', 'raise', 'report', 'log', 'add', 'make', 'submit', 'new'],
      objects: ['issue', 'bug', 'ticket'],
      not: ['comment', 'comments'],
    },
    list_issues: {
      verbs: ['list', 'show', 'get', 'find', 'fetch', 'what', 'which', 'any', 'check', 'see', 'display', 'give', 'pull', 'read', 'look'],
      objects: ['issues', 'bugs', 'tickets'],
    },
    get_issue: {
      verbs: ['get', 'show', 'fetch', 'read', 'look', 'see', 'display', 'what', 'check', 'status', 'find'],
      objects: ISSUE,
      not: ['issues', 'comment', 'pr', 'pull request'],
    },
    comment_on_issue: {
      verbs: ['comment', 'reply', 'respond', 'answer', 'write', 'add', 'post', 'leave'],
      objects: ['comment', ...ISSUE],
      // "post the issue link in #eng on Slack": a #channel or Slack says where it goes, not a comment.
      not: ['pr', 'pull request', '@channel', 'slack'],
    },
    add_labels: { verbs: ['label', 'tag', 'add', 'apply', 'put', 'mark', 'set'], objects: ['label', 'labels', 'tag'] },
    close_issue: { verbs: ['close', 'resolve', 'shut'], objects: ISSUE, not: ['pr', 'pull request', 'reopen'] },
    reopen_issue: { verbs: ['reopen'], objects: ISSUE, not: ['pr', 'pull request'] },
    update_issue: {
      verbs: ['update', 'edit', 'change', 'rename', 'retitle', 'assign', 'modify', 'set'],
      objects: [...ISSUE, 'title', 'description', 'assignee'],
      not: ['label', 'labels', 'pr', 'pull request'],
    },
    list_pull_requests: {
      verbs: ['list', 'show', 'get', 'find', 'fetch', 'what', 'which', 'any', 'check', 'see', 'display', 'give', 'read', 'look'],
      objects: ['pull requests', 'prs', 'merge requests'],
    },
    get_pull_request: {
      verbs: ['get', 'show', 'fetch', 'read', 'look', 'see', 'display', 'what', 'check', 'status'],
      objects: PR,
      not: ['pull requests', 'prs', 'comment'],
    },
    comment_on_pull_request: {
      verbs: ['comment', 'reply', 'respond', 'answer', 'write', 'add', 'post', 'leave'],
      objects: PR,
      not: ['@channel', 'slack'],
    },
    merge_pull_request: { verbs: ['merge', 'squash', 'rebase', 'land', 'ship'], objects: [...PR, '@number'] },
    get_repository: {
      verbs: ['describe', 'get', 'show', 'info', 'details', 'stars', 'tell', 'how', 'what', 'check', 'look'],
      objects: ['repo', 'repository', '@repo', 'stars', 'star'],
      // What the catalog cannot read about a repository: refused rather than answered with its description.
      not: [
        'issue',
        'issues',
        'pr',
        'prs',
        'pull request',
        'pull requests',
        'create',
        'new',
        'search',
        'find',
        'readme',
        'file',
        'files',
        'commit',
        'commits',
        'branch',
        'branches',
        'release',
        'releases',
        'contributors',
        'tags',
        'workflow',
        'workflows',
        'actions',
        'code',
      ],
    },
    search_repositories: {
      verbs: ['search', 'find', 'look', 'discover', 'list', 'show'],
      objects: ['repositories', 'repos', 'repository', 'repo', 'projects'],
      not: ['issue', 'issues', 'pr', 'prs'],
    },
    create_repository: {
      verbs: ['create', 'make', 'new', 'set', 'start', 'init', 'initialize', 'add'],
      objects: ['repository', 'repo'],
      not: ['issue', 'bug', 'ticket', 'label', 'comment'],
    },
  },
};
