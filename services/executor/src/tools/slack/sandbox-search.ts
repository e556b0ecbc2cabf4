/** A post of the sandbox, as search_messages reads it. */
interface Post {
  /** Channel name. */
  channel: string;
  text: string;
  at: Date;
}

/** The start of a day (YYYY-MM-DD or YYYY/MM/DD), UTC. */
const dayStart = (v: string) => Date.parse(`${v.replaceAll('/', '-')}T00:00:00Z`);
const DAY_MS = 86_400_000;

/**
 * The subset of Slack's search syntax the sandbox answers: words (every one, case-insensitive,
 * in the text; "quoted phrases" as one), `in:#channel` / `in:channel`, `from:` (every post of
 * the sandbox is the connected user's: `from:me`, `from:@me` or their id match, anyone else
 * matches nothing), `after:`/`before:`/`on:` a day (after and before exclusive, as Slack).
 */
export function parseSearch(query: string, me: string): { matches(p: Post): boolean } {
  const terms = query.match(/(?:[a-z]+:)?"[^"]*"|\S+/gi) ?? [];
  const tests = terms.map((raw): ((p: Post) => boolean) => {
    const [, op, quoted] = /^(?:([a-z]+):)?"?([^"]*)"?$/i.exec(raw) ?? [];
    const v = (quoted ?? '').toLowerCase();
    switch (op?.toLowerCase()) {
      case 'in':
        return (p) => p.channel === v.replace(/^#/, '');
      case 'from': {
        const who = v.replace(/^@/, '').replace(/^<@(.*)>$/, '$1');
        return () => who === 'me' || who === me.toLowerCase();
      }
      case 'after':
        return (p) => p.at.getTime() >= dayStart(v) + DAY_MS;
      case 'before':
        return (p) => p.at.getTime() < dayStart(v);
      case 'on':
        return (p) => p.at.getTime() >= dayStart(v) && p.at.getTime() < dayStart(v) + DAY_MS;
      default: {
        const word = op ? raw.toLowerCase() : v;
        return (p) => p.text.toLowerCase().includes(word);
      }
    }
  });
  return { matches: (p) => tests.every((t) => t(p)) };
}
