import { ref } from '@tes/catalog';
import { entitiesOf, takeQuote, type Slots } from '../slots.js';
import { QUOTE } from '../text.js';
import { derive, textOrBack, type Fill } from './common.js';

/** Per action: what each of its fields comes from. */
export const SLACK_FILLS: Record<string, Fill> = {
  'slack.post_message': (s, put) => {
    const channel = channelName(s) ?? s.state.channel;
    put('channel', channel);
    if (channel) s.state.channel = channel;
    put(
      'text',
      textOrBack(s, ['body', 'colon'], ['post', 'send', 'say', 'tell', 'notify', 'announce', 'share', 'write', 'ping', 'message']),
    );
  },
  'slack.send_direct_message': (s, put) => {
    const user = person(s);
    put('user', user);
    const text = textOrBack(s, ['body', 'colon'], ['dm', 'message', 'send', 'tell', 'ping', 'write', 'say']);
    // "dm bartek that the build is green": the person named is who it goes to, not what it says.
    const escaped = user?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const message = escaped && text ? text.replace(new RegExp(`^${escaped}\\b[\\s,:]*`, 'iu'), '') : text;
    put('text', message?.replace(/^(?:(?:on|via|in|over|through)\s+slack\b[\s,:]*)?(?:that\s+)?/iu, '') || undefined);
  },
  'slack.list_channels': () => undefined,
  'slack.create_channel': (s, put) => {
    const bare = s.clause.raw.replace(QUOTE, ' ');
    const name =
      entitiesOf(s, 'channel')[0]?.value ??
      takeQuote(s, ['title', 'quoted']) ??
      /\b(?:name|call)\s+it\s+#?([\p{L}\p{N}_-]+)/iu.exec(bare)?.[1] ??
      // "Maak in Slack een kanaal release-q2 aan": read in canonical English.
      (s.state.lang !== 'en'
        ? /\bchannel\s+(?:called\s+|named\s+)?(?!(?:for|about|to|with|on|in|the|a|an)\b)([\p{L}\p{N}][\p{L}\p{N}_-]*-[\p{L}\p{N}_-]+|[\p{L}\p{N}_-]*\d[\p{L}\p{N}_-]*)/iu.exec(
            s.clause.canon,
          )?.[1]
        : undefined) ??
      /\bchannel\s+(?:called\s+|named\s+)?(?!(?:for|about|to|with|on|in|the|a|an)\b)([\p{L}\p{N}_-]+(?:\s+(?!for\b|with\b|and\b|to\b|in\b|on\b)[\p{L}\p{N}_-]+)*)/iu.exec(
        bare,
      )?.[1];
    // "a channel for the q3 launch": no name given, the purpose said makes one (a new channel's name is its title).
    const purpose = name
      ? undefined
      : /\bchannel\s+(?:for|about)\s+(?:the\s+|our\s+|a\s+|my\s+)?([\p{L}\p{N}][\p{L}\p{N}_-]*(?:\s+[\p{L}\p{N}][\p{L}\p{N}_-]*){0,3}?)(?=\s+(?:and|with|to|then|in|on|please|asap|stuff)\b|[,.;!?]|$)/iu.exec(
          bare,
        )?.[1];
    // "called offsite-2026 for the planning stuff": the name stops where its purpose starts.
    const said = name?.split(/\s+(?:for|about|with|to|so|because|where|which)\b/i)[0] ?? name ?? purpose;
    if (said && !/^(?:for|called|named|in|on|with|the)$/i.test(said)) {
      const slug = said
        .replace(/^#/, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}_-]+/gu, '-')
        .slice(0, 80);
      put('name', slug);
      s.state.channel = slug;
      if (purpose) derive(s, 'name', slug, `no name given: from "for ${purpose}"`);
    }
    if (/\bprivate\b/.test(s.clause.canon)) put('is_private', true);
  },
  'slack.invite_to_channel': (s, put) => {
    put('channel', channelName(s) ?? s.state.channel);
    const users = [
      ...entitiesOf(s, 'user').map((u) => (/^[UW][A-Z0-9]{8,}$/.test(u.value) ? u.value : `@${u.value}`)),
      ...entitiesOf(s, 'email').map((e) => e.value),
    ];
    // "add marco and joana@acme.io to #proj": a name listed beside the addresses is invited too.
    const list =
      /^(?:please\s+)?(?:invite|add|bring|loop in|pull in)\s+(.+?)\s+(?:to|into|in)\s+(?:the\s+)?(?:⟨\d+⟩|channel|it|there)/i.exec(
        s.clause.raw.trim(),
      )?.[1];
    for (const part of list?.split(/\s*(?:,|\band\b|&|\+)\s*/) ?? []) {
      if (/^[\p{L}][\p{L}'.-]{1,30}$/u.test(part) && !NOT_NAMES.test(part.toLowerCase()) && !users.includes(part)) users.push(part);
    }
    if (users.length === 0) {
      const p = person(s);
      if (p) users.push(p);
    }
    put('users', users.length > 0 ? users : undefined);
  },
  'slack.list_messages': (s, put) => {
    put('channel', channelName(s) ?? s.state.channel);
    if (s.when?.windowStart && /\b(?:today|yesterday|since|this|last|past)\b/.test(s.clause.canon)) put('oldest', s.when.windowStart);
  },
};

/** A person named after a verb or preposition ("DM Sarah", "message @bob", "to Alex"). */
function person(s: Slots): string | undefined {
  const user = entitiesOf(s, 'user')[0] ?? entitiesOf(s, 'email')[0];
  // A Slack id (U024BE7LH) is used as it is; a handle keeps its "@".
  if (user) return user.kind === 'user' && !/^[UW][A-Z0-9]{8,}$/.test(user.value) ? `@${user.value}` : user.value;
  const m = /\b(?:dm|message|ping|tell|text|let|to|with|envoie\s+à|à|an|a)\s+([\p{Lu}][\p{L}'-]+(?:\s+[\p{Lu}][\p{L}'-]+)?)/u.exec(
    s.clause.raw.replace(/^\S+\s+/, (w) => w.toLowerCase()),
  );
  if (m?.[1]) return m[1];
  // "dm priya …": a name right after the verb, in lower case too (a word the planner knows is not a name).
  const lower = /^(?:please\s+)?(?:dm|pm|message|ping|slack|text)\s+([\p{Ll}][\p{Ll}'-]{1,30})\b/u.exec(s.clause.raw.trim())?.[1];
  if (lower && !NOT_NAMES.test(lower) && !s.clause.words.slice(1, 2).some((w) => w !== lower)) return lower;
  // "… with kim@acme.io, and dm her the link": the one person the request named before.
  if (/^(?:please\s+)?(?:dm|pm|message|ping|tell|text|slack)\s+(?:her|him|them)\b/i.test(s.clause.raw.trim())) {
    const named = [...new Set(s.state.entities.filter((e) => e.kind === 'email' || e.kind === 'user').map((e) => e.value))];
    if (named.length === 1) return named[0];
  }
  return undefined;
}

/** Words after "dm" that are not a person's name. */
const NOT_NAMES =
  /^(?:me|us|them|him|her|it|everyone|everybody|all|the|a|an|my|our|this|that|people|team|channel|someone|somebody|quick|real|asap|about|to|in|on|with)$/;

export function channelName(s: Slots): string | undefined {
  if (s.state.item?.field === 'name') return ref(s.state.item.step, `items.${s.state.item.index}.name`);
  const ch = entitiesOf(s, 'channel')[0]?.value;
  if (ch) return ch;
  // "nel canale marketing": read in canonical English.
  if (s.state.lang !== 'en') {
    const named = /\bchannel\s+(?!(?:for|about|to|with|on|in|the|a|an|slack|that|which)\b)([\p{L}\p{N}_-]{2,})/iu.exec(
      s.clause.canon.replace(QUOTE, ' '),
    )?.[1];
    if (named) return named.toLowerCase();
  }
  const raw = s.clause.raw.replace(QUOTE, ' ');
  const skip = /^(?:the|a|this|that|slack|same|new|private|public|my|our|which|what|each|every|to|in|on|called|named)$/;
  for (const re of [
    /\b(?:the\s+)?([\p{L}\p{N}_-]+)\s+(?:slack\s+)?channel\b/iu,
    /\bchannel\s+(?:called\s+|named\s+)?([\p{Ll}\p{N}_-]+)/iu,
  ]) {
    const name = re.exec(raw)?.[1]?.toLowerCase();
    if (name && !skip.test(name)) return name;
  }
  return undefined;
}
