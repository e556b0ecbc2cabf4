import type { ToolHints } from '../../types.js';

export const HTTP_HINTS: ToolHints = {
  nouns: ['http', 'https', 'url', '@url', 'endpoint', 'webhook', 'api', 'website', 'webpage', 'page'],
  actions: {
    fetch: {
      verbs: [
        'fetch',
        'get',
        'download',
        'load',
        'open',
        'read',
        'check',
        'retrieve',
        'grab',
        'request',
        'call',
        'hit',
        'curl',
        'ping',
        'see',
        'show',
        'what',
        'visit',
        'scrape',
        'pull',
      ],
      objects: ['@url'],
      not: ['post', 'submit', 'send'],
    },
    post: {
      verbs: ['post', 'submit', 'send', 'push', 'trigger', 'notify', 'call'],
      objects: ['@url'],
      // A #channel or an address says where a "post" goes: Slack or email, not an HTTP POST.
      not: ['fetch', 'get', 'download', '@channel', '@email', '@user'],
    },
  },
};
