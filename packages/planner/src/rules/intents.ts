import type { ActionDef, ActionHints, ToolDef, ToolHints } from '@tes/catalog';
import type { Clause, Entity, EntityKind } from './text.js';
import { ENTITY } from './text.js';

/**
 * Which catalog action a clause asks for. An action is a candidate only when the clause holds one of
 * its verbs (or phrases) and one of its objects, and none of its excluding words: the planner
 * never falls back to "some action of the tool", so a verb it does not know ends in a refusal.
 */

export interface ToolEntry {
  tool: ToolDef;
  hints: ToolHints;
}

export interface Intent {
  tool: ToolDef;
  action: ActionDef;
  hints: ActionHints;
  score: number;
}

const TIME_WORDS =
  /\b(?:today|tonight|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|noon|midnight|\d{1,2}(?::\d{2})?\s*(?:am|pm)|\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|(?:january|february|march|april|may|june|july|august|september|october|november|december)\s+\d{1,2})\b/;

export function entityKinds(clause: Clause, entities: readonly Entity[]): Set<EntityKind> {
  const kinds = new Set<EntityKind>();
  for (const m of clause.raw.matchAll(ENTITY)) {
    const e = entities[Number(m[1])];
    if (e) kinds.add(e.kind);
  }
  // A day or an hour said ("on Friday at 3pm", "tomorrow", "16:00-17:00"): what an event needs.
  if (TIME_WORDS.test(clause.canon)) kinds.add('time');
  return kinds;
}

export function hasTerm(clause: Clause, kinds: ReadonlySet<string>, term: string, hasQuote: boolean): boolean {
  if (term === '@quote') return hasQuote;
  if (term.startsWith('@')) return kinds.has(term.slice(1));
  if (term.includes(' ')) return ` ${clause.phrase} `.includes(` ${term} `) || ` ${clause.canon} `.includes(` ${term} `);
  return clause.words.includes(term);
}

/** Verbs that ask for something even when no catalog action matches: such a clause is refused, never dropped or read. */
export const ACTION_WORDS: ReadonlySet<string> = new Set([
  'delete',
  'remove',
  'archive',
  'assign',
  'move',
  'rename',
  'upload',
  'download',
  'buy',
  'order',
  'cancel',
  'reschedule',
  'update',
  'edit',
  'change',
  'set',
  'mute',
  'pin',
  'star',
  'react',
  'like',
  'follow',
  'approve',
  'reject',
  'call',
  'print',
  'export',
  'import',
  'backup',
  'deploy',
  'run',
  'restart',
  'kick',
  'ban',
  'unsubscribe',
  'subscribe',
  'block',
  'share',
  'create',
  'send',
  'post',
  'add',
  'close',
  'open',
  'list',
  'show',
  'find',
  'search',
  'get',
  'fetch',
  'read',
  'check',
  'schedule',
  'book',
  'invite',
  'email',
  'mail',
  'message',
  'tell',
  'reply',
  'comment',
  'merge',
  'draft',
  'write',
  'make',
  'notify',
  'ping',
  'dm',
  'label',
  'tag',
  'forward',
  'append',
  'save',
  'give',
  'look',
  'remind',
  'let',
  'ask',
  'transfer',
  'pay',
  'publish',
  'tweet',
  'drop',
  'clear',
  'empty',
  'disable',
  'enable',
  'install',
  'uninstall',
  'lock',
  'unlock',
  'reset',
  'revert',
  'rollback',
  'ship',
  'release',
  'fork',
  'clone',
  'push',
  'pull',
  'sync',
  'copy',
  'convert',
  'generate',
  'compute',
  'calculate',
  'echo',
  'uppercase',
  'lowercase',
  'count',
  'join',
  'reopen',
  'query',
  'describe',
  'announce',
  'broadcast',
  'submit',
  'trigger',
  'erase',
  'destroy',
  'wipe',
  'purge',
  'kill',
  'stop',
  'start',
  'resume',
  'pause',
  'decline',
  'accept',
  'unassign',
  'unlabel',
  'leave',
  'join',
  'do',
  'make',
  'fix',
  'handle',
  'complete',
  'finish',
  'mark',
  'snooze',
  'flag',
  'unflag',
  'spam',
  'report',
  'move',
  'rsvp',
  'postpone',
]);

const QUESTION_WORDS = new Set([
  'what',
  'which',
  'who',
  'whom',
  'whose',
  'when',
  'where',
  'why',
  'how',
  'did',
  'does',
  'do',
  'is',
  'are',
  'was',
  'were',
  'has',
  'have',
  'any',
  'am',
  'whats',
]);

/** A question ("what's on my calendar?", "did bob reply?"), not a request put as one ("can you post …?"). */
export function isQuestion(clause: Clause): boolean {
  const first = clause.words[0];
  return first !== undefined && QUESTION_WORDS.has(first);
}

const DETERMINERS = new Set([
  'a',
  'an',
  'the',
  'my',
  'your',
  'our',
  'his',
  'her',
  'their',
  'its',
  'this',
  'that',
  'these',
  'those',
  'some',
  'any',
  'each',
  'every',
  'no',
  'last',
  'latest',
  'new',
  'first',
]);

/** A word that is also a noun ("an email", "the draft", "my schedule") counts as a verb only where no determiner precedes it. */
export function usedAsVerb(words: readonly string[], verb: string): boolean {
  if (verb.includes(' ')) return ` ${words.join(' ')} `.includes(` ${verb} `);
  return words.some(
    (w, i) =>
      w === verb && !DETERMINERS.has(words[i - 1] ?? '') && !/^(?:as|be|been|being|was|were|is|are|got|get)$/.test(words[i - 1] ?? ''),
  );
}

/** Per hints' `existing` list (the catalog's, kept for the process): its regular expression, compiled once. */
const existingPatterns = new WeakMap<readonly string[], RegExp>();

/** "add bob to tomorrow's standup", "invite ana to the 3pm meeting": something that exists, not a new one. */
function addsToExisting(canon: string, nouns: readonly string[]): boolean {
  let re = existingPatterns.get(nouns);
  if (!re) {
    const noun = nouns.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
    re = new RegExp(`\\bto\\s+(?:the|my|our|this|that|today's|tomorrow's|[a-z]+'s)\\s+(?:[\\w:-]+\\s+){0,2}(?:${noun})\\b`);
    existingPatterns.set(nouns, re);
  }
  return re.test(canon);
}

/** The actions the clause asks for, best first (ties kept: the caller decides what a tie means). */
export function rankIntents(
  clause: Clause,
  entities: readonly Entity[],
  catalog: readonly ToolEntry[],
  hasQuote: boolean,
  ignore: ReadonlySet<string> = new Set(),
  /** The tool of the step before: "… and close it" closes what that step acted on. */
  context?: string,
): Intent[] {
  const kinds = entityKinds(clause, entities);
  if (kinds.has('number')) kinds.add('number');
  const has = (t: string) => hasTerm(clause, kinds, t, hasQuote);
  const firstWord = clause.words[0] === 'please' ? clause.words[1] : clause.words[0];
  // A question asks to read: "what did people say in #support?" never posts. A clause without any
  // verb ("the first 5 rows of database X") can only be a read too.
  const question =
    isQuestion(clause) ||
    (!clause.words.some((w) => ACTION_WORDS.has(w)) &&
      !catalog.some(({ hints }) =>
        Object.values(hints.actions).some((a) =>
          a.verbs.some((v) => (v.startsWith('^') ? firstWord === v.slice(1) : clause.words.includes(v))),
        ),
      ));
  const out: Intent[] = [];
  for (const { tool, hints } of catalog) {
    const toolSignal = hints.nouns.filter(has).length;
    for (const action of tool.actions) {
      const h = hints.actions[action.name];
      if (!h) continue;
      // A verb marked "^" counts only as the clause's first word ("slack #ops: …", not "the Slack channel").
      const verbs = h.verbs.filter((v) => (v.startsWith('^') ? firstWord === v.slice(1) : !ignore.has(v) && usedAsVerb(clause.words, v)));
      const phrase = h.phrases?.some((p) => ` ${clause.phrase} `.includes(` ${p} `) || ` ${clause.canon} `.includes(` ${p} `)) ?? false;
      // Without a verb, only a read that names what it reads ("the open PRs in acme/api?").
      if (verbs.length === 0 && !phrase && !(question && action.side_effect === 'read' && h.objects.length > 0)) continue;
      const objects = h.objects.filter(has);
      // Acting on "it" counts for the tool the step before used, weakly: a named target wins.
      // "find the latest email from bob@x.io and reply 'paid'": a short clause led by the verb acts on what the step before found.
      const viaContext =
        objects.length === 0 &&
        context === tool.name &&
        (/\b(?:it|them|this|that)\b/.test(clause.canon) ||
          (clause.words.length <= 2 &&
            verbs.includes(firstWord ?? '') &&
            // Only when the verb names one action of the tool ("reply" after a search of mail; not "post", which several have).
            Object.values(hints.actions).filter((a) => a.verbs.includes(firstWord ?? '')).length === 1));
      if (h.objects.length > 0 && objects.length === 0 && !phrase && !viaContext) continue;
      if (h.not?.some(has)) continue;
      if (h.existing && addsToExisting(clause.canon, h.existing)) continue;
      if (question && action.side_effect !== 'read') continue;
      const leading = verbs.some((v) => v === firstWord) ? 3 : 0;
      const direct = directObject(clause.words, verbs, objects) ? 4 : 0;
      const specific = Math.max(0, ...objects.map((o) => (o.startsWith('@') ? 2 : o.split(' ').length + (o.length > 5 ? 1 : 0))));
      out.push({
        tool,
        action,
        hints: h,
        score: 10 + (phrase ? 8 : 0) + leading + direct + 3 * Math.min(objects.length, 2) + specific + 2 * Math.min(toolSignal, 3),
      });
    }
  }
  return out.sort((a, b) => b.score - a.score);
}

/** Verbs that mean the same as the first word of an action's name. */
const SYNONYMS: Record<string, readonly string[]> = {
  create: ['create', 'add', 'new', 'make', 'register', 'open'],
  add: ['add', 'create', 'new', 'make', 'register'],
  list: ['list', 'show', 'get', 'find', 'fetch', 'what', 'which', 'display', 'see'],
  get: ['get', 'show', 'fetch', 'find', 'read', 'look', 'what', 'display', 'see'],
  search: ['search', 'find', 'look', 'query'],
  find: ['find', 'search', 'look', 'get'],
  delete: ['delete', 'remove', 'erase', 'drop'],
  remove: ['remove', 'delete', 'erase', 'drop'],
  update: ['update', 'edit', 'change', 'modify', 'set'],
  send: ['send', 'post', 'notify'],
  post: ['post', 'send', 'submit'],
};

const ARTICLES = new Set(['a', 'an', 'the', 'my', 'our', 'new', 'this', 'that', 'some', 'all', 'these', 'those', 'me', 'quick', 'short']);

/** The object follows its verb ("create a contact", "close issue 4"): the strongest sign of what the clause asks. */
function directObject(words: readonly string[], verbs: readonly string[], objects: readonly string[]): boolean {
  const plain = objects.filter((o) => !o.startsWith('@') && !o.includes(' '));
  for (const [i, w] of words.entries()) {
    if (!verbs.includes(w)) continue;
    let j = i + 1;
    while (j < words.length && ARTICLES.has(words[j] ?? '')) j++;
    if (plain.includes(words[j] ?? '')) return true;
  }
  return false;
}

/** Hints for a custom tool: its keywords and the words of its name; its actions' keywords and names. */
export function customHints(tool: ToolDef): ToolHints {
  const split = (s: string) =>
    s
      .toLowerCase()
      .split(/[_\s-]+/)
      .filter((w) => w.length > 1);
  const nouns = [...new Set([...tool.keywords.map((k) => k.toLowerCase()), ...split(tool.name)])];
  const actions: Record<string, ActionHints> = {};
  for (const a of tool.actions) {
    const [verb = '', ...things] = split(a.name);
    const objects = [
      ...new Set([...nouns, ...things, ...things.map((w) => w.replace(/s$/, '')), ...things.map((w) => `${w.replace(/s$/, '')}s`)]),
    ];
    const verbs = [...new Set([...(SYNONYMS[verb] ?? [verb]), ...(a.keywords ?? []).map((k) => k.toLowerCase())])].filter(
      (v) => !objects.includes(v),
    );
    actions[a.name] = { verbs, objects };
  }
  return { nouns, actions };
}
