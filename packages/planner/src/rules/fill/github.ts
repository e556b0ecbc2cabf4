import { ref } from '@tes/catalog';
import { entitiesOf, pointsBack, previousData, quoteAfter, referenceFor, takeQuote, type Slots } from '../slots.js';
import { QUOTE } from '../text.js';
import { aboutText, textOrBack, type Fill } from './common.js';

/** "… with its subject as the title": a field of what the step before found. */
function outputAsTitle(s: Slots): string | undefined {
  const prev = previousData(s.state);
  // Read with its cut-out texts put back: "subject" is also a marker ("with its subject as the title").
  const said = s.clause.raw.replace(QUOTE, (_m, i: string) => ` ${s.state.quotes[Number(i)]?.text ?? ''} `).toLowerCase();
  const field = /\b(?:its|the|their)\s+(subject|title|name|summary)\s+as\s+(?:the\s+)?(?:title|name)\b/.exec(said)?.[1];
  if (field)
    for (const id of s.quoteIds) if (/^as (?:the )?(?:title|name)$/i.test(s.state.quotes[id]?.text ?? '')) s.state.usedQuotes.add(id);
  if (!prev || !field) return undefined;
  const list =
    /^(?:gmail\.search_email|slack\.list_messages|github\.list_issues|github\.list_pull_requests|notion\.search|google_calendar\.list_events)$/.test(
      `${prev.step.tool}.${prev.step.action}`,
    );
  return ref(prev.index, `${list ? 'items.0.' : ''}${field}`);
}

/** "… with the response as the body": the step before's output is the text. */
function outputAsBody(s: Slots): string | undefined {
  const prev = previousData(s.state);
  if (
    !prev ||
    !/\b(?:the\s+)?(?:response|result|results|output|it|that|contents?|page)\s+as\s+(?:the\s+|its\s+)?(?:body|description|text)\b/.test(
      s.clause.canon,
    )
  )
    return undefined;
  return referenceFor(s.clause, prev.index, prev.step);
}

/** Per action: what each of its fields comes from. */
export const GITHUB_FILLS: Record<string, Fill> = {
  'github.create_issue': (s, put) => {
    put('labels', labels(s));
    put('title', outputAsTitle(s) ?? takeQuote(s, ['title', 'colon', 'subject']) ?? aboutText(s));
    put('body', takeQuote(s, ['body'], { anyQuoted: true }) ?? outputAsBody(s));
  },
  'github.list_issues': (s, put) => {
    put('state', stateOf(s));
    put('labels', /\blabell?ed\b|\bwith (?:the )?labels?\b|\btagged\b/.test(s.clause.canon) ? labels(s) : undefined);
  },
  'github.get_issue': (s, put) => put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', ''])),
  'github.comment_on_issue': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    put('body', textOrBack(s, ['body', 'colon'], ['comment', 'reply', 'write', 'add', 'post', 'leave'], { leftover: false }));
  },
  'github.add_labels': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    put('labels', labels(s));
  },
  'github.close_issue': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    if (
      /\b(?:not planned|won'?t fix|will not fix|wontfix|duplicate|dupe|invalid|irrelevant|obsolete|not (?:gonna|going to) (?:do|fix)|never going to)\b/.test(
        s.clause.canon,
      )
    )
      put('reason', 'not_planned');
  },
  'github.reopen_issue': (s, put) => put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', ''])),
  'github.update_issue': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    const renames = /\b(?:rename|retitle|title)\b/.test(s.clause.canon);
    put('title', renames ? (quoteAfter(s, /\bto/) ?? takeQuote(s, ['quoted', 'title'])) : undefined);
    if (/\b(?:body|description)\b/.test(s.clause.canon)) put('body', quoteAfter(s, /\bto/) ?? takeQuote(s, ['quoted', 'body']));
    const assignee =
      /\bassign(?:\s+(?:it|this|the issue|(?:⟨\d+⟩)+))?\s+to\s+@?([\p{L}\p{N}_-]+(?:\s*(?:,|and|&)\s*@?[\p{L}\p{N}_-]+)*)/iu.exec(
        s.clause.raw,
      );
    const handles = entitiesOf(s, 'user').map((u) => u.value);
    const named =
      assignee?.[1]
        ?.split(/\s*(?:,|\band\b|&)\s*/)
        .map((w) => w.replace(/^@/, ''))
        .filter(Boolean) ?? [];
    const users = handles.length ? handles : named;
    if (/\bassign/.test(s.clause.canon) && users.length && users[0]?.toLowerCase() !== 'me') put('assignees', users);
  },
  'github.list_pull_requests': (s, put) => put('state', stateOf(s)),
  'github.get_pull_request': (s, put) => put('pull_number', issueNumber(s, ['pr', 'pull request', 'mr', 'merge request', ''])),
  'github.comment_on_pull_request': (s, put) => {
    put('pull_number', issueNumber(s, ['pr', 'pull request', 'mr', 'merge request', '']));
    put('body', textOrBack(s, ['body', 'colon'], ['comment', 'reply', 'write', 'add', 'post', 'leave'], { leftover: false }));
  },
  'github.merge_pull_request': (s, put) => {
    put('pull_number', issueNumber(s, ['pr', 'pull request', 'mr', 'merge request', '']));
    if (/\bsquash/.test(s.clause.canon)) put('merge_method', 'squash');
    else if (/\brebase/.test(s.clause.canon)) put('merge_method', 'rebase');
  },
  'github.search_repositories': (s, put) => {
    // "the repos in the acme org": GitHub's search syntax for an owner.
    const org =
      /\b(?:in|of|from|owned by|under)\s+(?:the\s+)?([A-Za-z0-9][\w.-]*)\s+(?:org|organization|organisation|account)\b|\b(?:org|organization)\s+([A-Za-z0-9][\w.-]*)/i.exec(
        s.clause.raw.replace(QUOTE, ' '),
      );
    const owner = org?.[1] ?? org?.[2];
    const words = (
      takeQuote(s, ['title', 'quoted', 'colon']) ?? aboutText(s, /\b(?:about|for|matching|related to|on|with|named|called)\s+(.+)$/i)
    )?.replace(/^(?:repos|repositories|projects)\s+(?:about|for|on|matching|related to|with)\s+/i, '');
    put('query', [words, owner ? `org:${owner}` : undefined].filter(Boolean).join(' ') || undefined);
  },
  'github.create_repository': (s, put) => {
    const description = quoteAfter(s, /\b(?:description|desc|described as|about)/);
    const quotedName = takeQuote(s, ['title', 'quoted']);
    const named =
      (quotedName && !/\s/.test(quotedName) ? quotedName : undefined) ??
      /\b(?:name|call)\s+it\s+([A-Za-z0-9_.-]{1,100})\b/i.exec(s.clause.raw.replace(QUOTE, ' '))?.[1] ??
      /\b(?:repo(?:sitory)?|dépôt|repositorio)\s+(?:called\s+|named\s+)?(?!(?:under|in|for|on|with|at|from|to|called|named|the|a|an|pls|please|and)\b)([A-Za-z0-9_.-]{1,100})\b/i.exec(
        s.clause.raw.replace(QUOTE, ' '),
      )?.[1];
    const repoEntity = entitiesOf(s, 'repo')[0]?.value;
    const org =
      /\b(?:in|under|for|to)\s+(?:the\s+)?([A-Za-z0-9][\w.-]*)\s+(?:org|organization|organisation)\b|\b(?:org|organization|organisation)\s+([A-Za-z0-9][\w.-]*)/i.exec(
        s.clause.raw.replace(QUOTE, ' '),
      );
    if (!repoEntity && (org?.[1] ?? org?.[2])) put('org', org?.[1] ?? org?.[2]);
    if (repoEntity) {
      const [org, name] = repoEntity.split('/');
      put('org', org);
      put('name', name);
    } else if (named && !/^(?:for|in|on|with|to|called|named|the)$/i.test(named)) put('name', named);
    put('description', description ?? takeQuote(s, ['body']) ?? (quotedName && /\s/.test(quotedName) ? quotedName : undefined));
    if (/\bpublic\b/.test(s.clause.canon)) put('private', false);
    else if (/\bprivate\b/.test(s.clause.canon)) put('private', true);
  },
  'github.get_repository': () => undefined,
};

function issueNumber(s: Slots, nouns: readonly string[]): number | string | undefined {
  if (s.state.item?.field === 'number') return ref(s.state.item.step, `items.${s.state.item.index}.number`);
  const numbers = entitiesOf(s, 'number');
  const exact = numbers.find((n) => nouns.includes(n.noun ?? ''));
  const any = exact ?? numbers.find((n) => !n.noun) ?? numbers[0];
  if (any) return Number(any.value);
  // "create an issue … then comment on it"
  const prev = previousData(s.state);
  if (prev && pointsBack(s.clause) && /^github\.(?:create_issue|get_issue|get_pull_request)$/.test(`${prev.step.tool}.${prev.step.action}`))
    return ref(prev.index, 'number');
  // "comment on issue 12 and close it": the number the step before acted on.
  const last = s.state.steps[s.state.steps.length - 1];
  const before = last?.input['issue_number'] ?? last?.input['pull_number'];
  if (pointsBack(s.clause) && last?.tool === 'github' && typeof before === 'number') return before;
  // "reopen #44 in acme/web and comment 'regression is back'": a clause naming no issue acts on the one before.
  if (last?.tool === 'github' && typeof before === 'number' && !entitiesOf(s, 'repo').length && !/\b(?:new|another)\b/.test(s.clause.canon))
    return before;
  return undefined;
}

function labels(s: Slots): string[] | undefined {
  const quoted: string[] = [];
  const re =
    /\b(?:labels?|labell?ed|tagged|tags?|as)\s*(?:it|them|(?:it|them)\s+(?:as|with))?\s*(?:[:=])?\s*((?:⟦\d+⟧(?:\s*(?:,|and|&)\s*)?)+)/giu;
  // In the user's words, else in canonical English ("a etiqueta ⟦0⟧" reads "the label ⟦0⟧").
  const text = re.test(s.clause.raw) ? s.clause.raw : s.clause.canon;
  re.lastIndex = 0;
  for (const m of text.matchAll(re)) {
    for (const q of (m[1] ?? '').matchAll(QUOTE)) {
      const id = Number(q[1]);
      const text = s.state.quotes[id]?.text;
      if (text) {
        quoted.push(text);
        s.state.usedQuotes.add(id);
      }
    }
  }
  if (quoted.length > 0) return quoted;
  const withLabel = /\b(?:with\s+(?:the\s+|a\s+)?|the\s+|a\s+)(?!(?:the|a|an|same|new)\b)([\p{L}\p{N}_-]+)\s+(?:label|tag)\b/iu.exec(
    s.clause.raw,
  );
  if (withLabel?.[1]) return [withLabel[1]];
  const bare =
    /\b(?:labels?|labell?ed|tag(?:ged)?|(?:mark|label|tag)\s+(?:it|them|#?\S+)\s+(?:as|with)|as)\s+(?:(?:it|them)\s+(?:with\s+)?)?(?:with\s+)?(?:a\s+|an\s+)?([\p{L}\p{N}_-]+(?:\s*(?:,|and|\+|&)\s*[\p{L}\p{N}_-]+)*)/iu.exec(
      s.clause.raw.replace(/⟨\d+⟩/g, ' '),
    );
  if (!bare?.[1]) return undefined;
  const words = bare[1]
    .split(/\s*(?:,|\band\b|\+|&)\s*/)
    .filter((w) => w && !/^(?:to|on|in|the|it|them|issue|issues|pr|body|title|description|text|comment)$/i.test(w));
  return words.length > 0 ? words : undefined;
}

function stateOf(s: Slots): string | undefined {
  const c = s.clause.canon;
  if (/\bopen\b.*\bclosed\b|\bclosed\b.*\bopen\b|\bboth\b/.test(c)) return 'all';
  if (/\bclosed\b|\bmerged\b|\bresolved\b/.test(c)) return 'closed';
  if (/\bopen\b/.test(c)) return 'open';
  if (/\ball\b/.test(c) && /\b(?:issues|prs|pull requests)\b/.test(c)) return 'all';
  return undefined;
}
