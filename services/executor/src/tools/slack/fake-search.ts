import type { Reply } from '../../test-support/fake-provider.js';

interface Posted {
  channel: string;
  text: string;
  ts: string;
  thread_ts?: string;
}

/** The workspace's own domain in permalinks. */
const WORKSPACE = 'https://acme-test.slack.com';

/**
 * Slack's search.messages, for the fake: words (all of them, case-insensitive), `in:#name` /
 * `in:<#C…>`, `from:@me` / `from:<@U00ME>` (every fake post is U00ME's), `after:`/`before:`
 * (days, exclusive as Slack reads them). Answers `{query, messages: {total, matches, paging}}`.
 * Sorted by `sort` (score = the fake's order, timestamp) and `sort_dir`; `count` per page.
 */
export function searchMessages(q: URLSearchParams, messages: readonly Posted[], channels: readonly { id: string; name: string }[]): Reply {
  const query = q.get('query') ?? '';
  if (!query.trim()) return { status: 200, body: { ok: false, error: 'no_query' } };
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  const day = (v: string) => Date.parse(`${v}T00:00:00Z`) / 1000;
  const hits = messages.filter((m) => {
    const ch = channels.find((c) => c.id === m.channel);
    return terms.every((t) => {
      const [, op, v = ''] = /^(in|from|after|before):(.*)$/.exec(t) ?? [];
      if (op === 'in') return v.replace(/^#/, '') === ch?.name || v === `<#${m.channel.toLowerCase()}>`;
      if (op === 'from') return ['@me', 'me', '<@u00me>'].includes(v);
      if (op === 'after') return Number(m.ts) >= day(v) + 86400;
      if (op === 'before') return Number(m.ts) < day(v);
      return m.text.toLowerCase().includes(t);
    });
  });
  const asc = q.get('sort') === 'timestamp' && q.get('sort_dir') === 'asc';
  const sorted = q.get('sort') === 'timestamp' ? [...hits].sort((a, b) => (Number(a.ts) - Number(b.ts)) * (asc ? 1 : -1)) : hits;
  const count = Math.min(Number(q.get('count') ?? 20), 100);
  const matches = sorted.slice(0, count).map((m) => {
    const ch = channels.find((c) => c.id === m.channel);
    const thread = m.thread_ts ? `?thread_ts=${m.thread_ts}&cid=${m.channel}` : '';
    return {
      type: 'message',
      iid: `iid-${m.ts}`,
      team: 'T00ACME',
      channel: { id: m.channel, name: ch?.name ?? m.channel, is_private: false },
      user: 'U00ME',
      username: 'me',
      ts: m.ts,
      text: m.text,
      permalink: `${WORKSPACE}/archives/${m.channel}/p${m.ts.replace('.', '')}${thread}`,
    };
  });
  const paging = { count, total: hits.length, page: 1, pages: Math.max(1, Math.ceil(hits.length / count)) };
  return {
    status: 200,
    body: { ok: true, query, messages: { total: hits.length, matches, paging, pagination: { total_count: hits.length } } },
  };
}
