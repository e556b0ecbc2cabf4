import type { Refusal } from '../types.js';
import { wordsOf, type Lang } from './lexicon.js';
import type { Clause } from './text.js';

/**
 * Requests the planner refuses before planning, and the words of every refusal: what was not
 * understood and how to say it so that it is.
 */

export const CAPABILITIES =
  'This service handles GitHub (issues, pull requests, repositories), Slack (messages, direct messages, channels), Gmail (send, draft, reply, search), Google Calendar (events, availability), Notion (pages, databases, search), HTTP requests to a URL, and text/data steps';

export function noMatch(what: string): Refusal {
  return {
    code: 'no_matching_tool',
    message: `${what}. ${CAPABILITIES}.`,
    suggestion:
      'Name the service and the action with its details, e.g. \'Close issue #12 in acme/api\', \'Post "Deploy done" to #eng\', or \'Email bob@example.com with subject "Hi" saying "See you at 3"\'',
  };
}

const TRIGGER =
  /^\s*(?:(?:whenever|every\s+time|each\s+time|as\s+soon\s+as|anytime|any\s+time|chaque\s+fois\s+que|dès\s+que|sobald|immer\s+wenn|cada\s+vez\s+que|en\s+cuanto)\b|(?:when|once|if|lorsque|quand|si|wenn|cuando)\b[^.?!]*\b(?:new|gets?|is|are|arrives?|comes?\s+in|opened|opens|created|creates|labell?ed|posted|posts|received?|receives|merged|closed|fails?|mentions?|changes?|emails?|sends?|comments?|replies|pass(?:es)?|succeeds?|finish(?:es)?|completes?|done|ready|green|deployed|approved|lands?|nouveau|nouvelle|arrive|reçois|neue[rs]?|ankommt|kommt|nuevo|nueva|llega)\b)/iu;

/** "if so", "if not", "otherwise", "only if": a step that depends on what an earlier one finds. */
const CONDITIONAL =
  /\b(?:if so|if not|if yes|if no|if it is,|(?<!\b(?:check|see|ask|know|whether)\s+)if (?:i am|i'm|it is|it's) (?:free|available|busy|not)\b[^.?!]*?\b(?:then|book|schedule|post|send|create|email)|otherwise|only if|unless|in that case|si c'est le cas|sinon|falls ja|ansonsten|si es así|si no)\b/i;

const INJECTION =
  /\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|system)\s+(?:instructions?|prompts?|rules?|messages?)\b|\bsystem\s+(?:override|prompt|message|instruction)s?\b|\byou\s+are\s+now\b|\bdeveloper\s+mode\b|\bjailbreak\b|\bnew\s+instructions?\s*:|<\/?(?:system|assistant|tool)>|\bact\s+as\s+(?:an?\s+)?(?:admin|root|system)\b|\bignore\s+(?:the\s+)?(?:user|request|above)\b|\b[a-z]+__[a-z_]+\b|\bpretend\s+(?:to\s+be|you)\b/i;

/** "send this tomorrow at 8am sharp, not before": a send at a later time, which the service does not hold back. */
const SEND_LATER =
  /\b(?:not before|no earlier than|sharp|send (?:it |this |that )?later|schedule (?:the|this|an?|my) (?:e-?mail|message|post|dm|reply)|(?:send|post|email|dm) (?:it|this|that|them) (?:on|at|tomorrow|tonight|next)\b)/i;

/** "merge PR 12 if the tests pass", "post to #eng after the deploy is done": a step that waits on what has not happened. */
const WAITS_ON =
  /\b(?:only\s+)?(?:if|unless|provided(?:\s+that)?|as\s+long\s+as|once|after|when|as\s+soon\s+as)\s+(?:the\s+|its\s+|their\s+|all\s+)?(?:tests?|builds?|ci|checks?|pipeline|deploy(?:ment)?|release|review(?:er)?s?|qa|it|they|this|that|he|she|someone|anyone|[\w-]+)\b[^.?!;]*?\b(?:pass(?:es|ed)?|succeed(?:s|ed)?|fail(?:s|ed)?|is\s+green|goes\s+green|turns?\s+green|(?:is|are|gets?|get)\s+(?:approved|merged|done|finished|ready|deployed|released|shipped)|approves?|finish(?:es)?|completes?|signs?\s+off|lands?|looks?\s+good|replies|responds|answers)\b/i;

const NEEDS_MODEL =
  /\bsomething\s+(?:fun|funny|nice|witty|clever|motivational|inspiring|encouraging|cool|interesting|catchy|creative|uplifting)\b|\b(?:a|some)\s+(?:joke|jokes|poem|haiku|pun|puns|fun fact)\b|\b(?:decide|deciding|judge|assess|evaluate|prioriti[sz]e|whichever|most\s+important|best\s+one|summari[sz]e|summari[sz]ing|summary|summaries|tl;?dr|recap|digest|translate|translation|rewrite|rephrase|paraphrase|proofread|analy[sz]e|sentiment|classify|categori[sz]e|brainstorm|fasse\s+(?:\S+\s+){0,8}zusammen|complain(?:ing|ts?)?|sentiment|mood|vibe|résume|résumer|résumé|zusammenfass\w*|resume|resumen|resumir|traduis|übersetze|traduce)\b/i;

const OTHER_SERVICES: Record<string, string> = {
  jira: 'Jira',
  trello: 'Trello',
  asana: 'Asana',
  linear: 'Linear',
  discord: 'Discord',
  'microsoft teams': 'Microsoft Teams',
  'ms teams': 'Microsoft Teams',
  teams: 'Microsoft Teams',
  dropbox: 'Dropbox',
  'google drive': 'Google Drive',
  gdrive: 'Google Drive',
  'google sheets': 'Google Sheets',
  spreadsheet: 'spreadsheets',
  'google docs': 'Google Docs',
  salesforce: 'Salesforce',
  hubspot: 'HubSpot',
  zoom: 'Zoom',
  outlook: 'Outlook',
  twitter: 'Twitter/X',
  tweet: 'Twitter/X',
  linkedin: 'LinkedIn',
  facebook: 'Facebook',
  instagram: 'Instagram',
  whatsapp: 'WhatsApp',
  telegram: 'Telegram',
  sms: 'SMS',
  'text message': 'SMS',
  phone: 'phone calls',
  gitlab: 'GitLab',
  bitbucket: 'Bitbucket',
  confluence: 'Confluence',
  airtable: 'Airtable',
  stripe: 'Stripe',
  shopify: 'Shopify',
  zendesk: 'Zendesk',
  intercom: 'Intercom',
  spotify: 'Spotify',
  'google meet': 'Google Meet',
  icloud: 'iCloud',
  'apple calendar': 'Apple Calendar',
  'outlook calendar': 'Outlook Calendar',
  clickup: 'ClickUp',
  figma: 'Figma',
  uber: 'Uber',
  amazon: 'Amazon',
  aws: 'AWS',
  'google maps': 'Google Maps',
  youtube: 'YouTube',
  reddit: 'Reddit',
  pagerduty: 'PagerDuty',
  datadog: 'Datadog',
};

/** Where a prompt names a service (`word`, an alternation or one name): "Jira …", "in Jira", "jira ticket". */
function namedPattern(word: string): RegExp {
  return new RegExp(
    `^\\s*${word}\\b(?![.\\w])|\\b(?:on|in|via|to|using|through|into|with|from|my|our|the|a|an)\\s+${word}\\b(?![.\\w])|\\b${word}\\s+(?:ticket|issue|card|board|message|channel|file|folder|doc|sheet|page|account|event|calendar|dm|chat|post|story|task|project|repo|server|meeting|contact|deal|lead|order|bucket|instance|workspace|space)s?\\b`,
    'u',
  );
}

/**
 * Each other service's pattern, compiled once (refuseUpfront runs twice per create: planning,
 * then checkPlan), and all of them in one: it matches exactly when one of them does, so a prompt
 * that names none (nearly all) is read once instead of once per service.
 */
const OTHER_SERVICE_NAMED: readonly (readonly [RegExp, string])[] = Object.entries(OTHER_SERVICES).map(
  ([word, name]) => [namedPattern(word), name] as const,
);
const ANY_OTHER_SERVICE_NAMED = namedPattern(`(?:${Object.keys(OTHER_SERVICES).join('|')})`);

/** A refusal that applies to the whole prompt, before any clause is planned. */
export function refuseUpfront(prompt: string): Refusal | undefined {
  const text = prompt
    .replace(/"[^"]*"|“[^”]*”|«[^»]*»|(^|[\s(:=,[])['‘][^'’]+['’](?=$|[\s.,;:!?)\]])/g, ' ')
    // A link or an address says nothing of what is asked ("…/summary.txt", "jira@acme.io").
    .replace(/\bhttps?:\/\/\S+/giu, ' ')
    .replace(/[\p{L}\p{N}._%+-]+@[\p{L}\p{N}.-]+\.\p{L}{2,}/gu, ' ');
  if (!/[\p{L}\p{N}]/u.test(prompt))
    return {
      code: 'no_matching_tool',
      message: 'The prompt says nothing to do.',
      suggestion: "Say what to do, e.g. 'List the open issues in acme/api'",
    };
  if (INJECTION.test(prompt))
    return {
      code: 'unsupported_request',
      message:
        'The prompt holds instructions aimed at the planner itself ("ignore previous instructions", "system override" …), so it is not planned.',
      suggestion: 'Send only the request you want carried out, e.g. \'Post "hi" to #general\'',
    };
  if (
    CONDITIONAL.test(text) &&
    !(TRIGGER.test(text) && !/^\s*(?:when|quand|wann|cuándo|cuando)(?:'s|\s+(?:is|are|was|were|will|do|does|did))\b/i.test(text))
  )
    return {
      code: 'unsupported_request',
      message:
        'A step that depends on what an earlier one finds ("if so …", "otherwise …") is not something the planner can run: every step of a task runs.',
      suggestion:
        "Ask for the first part alone (e.g. 'Am I free Friday 3-4pm?'), then create the second task yourself if the answer calls for it",
    };
  // "when is my next meeting?" asks; "when a new issue is labeled, …" waits for an event.
  const question = /^\s*(?:when|quand|wann|cuándo|cuando)(?:'s|\s+(?:is|are|was|were|will|do|does|did|was|est|ist|es))\b/i.test(text);
  if (TRIGGER.test(text) && !question)
    return {
      code: 'unsupported_request',
      message: 'The service runs a request now; it does not watch for future events ("when a new issue is labeled …").',
      suggestion:
        'Create a task when the event happens (for example from your own webhook handler), saying what to do then, e.g. \'Post "New bug: #42" to #eng\'',
    };
  if (SEND_LATER.test(text))
    return {
      code: 'unsupported_request',
      message: 'The service sends now; it does not hold a message back until a later time ("tomorrow at 8am sharp").',
      suggestion: 'Create the task at the time it should go out, or say "now", e.g. \'Email ana@corp.com "Happy birthday!"\'',
    };
  if (NEEDS_MODEL.test(text))
    return {
      code: 'unsupported_request',
      message: 'Summarising, translating or rewriting text needs a language model; no action of the catalog does it.',
      suggestion: "Ask for the items themselves: 'Post the open pull requests of acme/api to #eng' posts them as a list",
    };
  // "any mail from stripe": a sender of email, not a service to act on.
  const lower = ` ${text.toLowerCase()} `.replace(
    /\b((?:e-?mails?|mails?|inbox|invoices?|receipts?|newsletters?|messages?)\b[^.?!]*?)\bfrom\s+/giu,
    '$1 sender ',
  );
  if (!ANY_OTHER_SERVICE_NAMED.test(lower)) return undefined;
  for (const [named, name] of OTHER_SERVICE_NAMED) {
    if (!named.test(lower)) continue;
    return {
      code: 'no_matching_tool',
      message: `${name} is not a service this deployment connects to. ${CAPABILITIES}.`,
      suggestion: 'Use one of the connected services, or register your own API as a custom tool (POST /v1/tools)',
    };
  }
  return undefined;
}

/** "every morning at 9", "each Monday", "daily at 5", "tous les lundis", "jeden Morgen", "cada semana". */
const SCHEDULE =
  /\b(?:every|each)\s+(?:other\s+|\d+\s+)?(?:day|morning|evening|night|afternoon|week|weekday|weekend|month|year|hour|minute|(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\b|\b(?:daily|hourly|nightly)\s+at\b|\bon\s+(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days|weekdays)\b|\b(?:tous les|toutes les|chaque)\s+(?:jours?|matins?|soirs?|semaines?|mois|heures?|lundis?|mardis?|mercredis?|jeudis?|vendredis?)\b|\b(?:jeden|jede)\s+(?:tag|morgen|abend|woche|monat|stunde|montag|dienstag|mittwoch|donnerstag|freitag)\b|\bcada\s+(?:día|dia|mañana|noche|semana|mes|hora|lunes|martes|miércoles|jueves|viernes)\b|\btäglich\s+um\b/iu;

/**
 * A request to repeat on a schedule ("every morning at 9, post the open issues to #eng"): a task runs
 * once, now. A calendar event's own recurrence ("a standup every Monday") is planned, so a plan with
 * a calendar step is left to the other checks.
 */
export function refuseSchedule(prompt: string, tools: readonly string[]): Refusal | undefined {
  if (tools.includes('google_calendar')) return undefined;
  const text = prompt.replace(/"[^"]*"|“[^”]*”|«[^»]*»/g, ' ');
  const m = SCHEDULE.exec(text);
  if (!m) return undefined;
  return {
    code: 'unsupported_request',
    message: `The service runs a request once, now; it does not repeat it on a schedule ("${m[0]}").`,
    suggestion:
      "Ask for one run ('Post the open issues of acme/api to #eng') and create the task from your own scheduler (cron, a workflow runner) each time it should run",
  };
}

/** Verbs a prompt forbids ("don't send it yet", "without posting", "ne l'envoie pas", "nicht senden"). */
export function forbiddenVerbs(canon: string, raw: string): Set<string> {
  const out = new Set<string>();
  for (const m of canon.matchAll(
    /\b(?:don'?t|do not|dont|never|without|no need to|not|shouldn'?t|must not|mustn'?t)\s+(?:yet\s+)?(\w+)(?:ing)?\b/g,
  )) {
    const v = (m[1] ?? '').replace(/ing$/, '');
    out.add(v === 'sen' ? 'send' : v === 'post' || v === 'postin' ? 'post' : v);
  }
  if (
    /\bne\s+(?:l'|le\s+|la\s+|les\s+)?(?:envoie|envoyez|envoyer)\s+pas\b|\bsans\s+(?:l'|le\s+)?envoyer\b|\bpas\s+(?:encore\s+)?envoyer\b/i.test(
      raw,
    )
  )
    out.add('send');
  if (
    /\bnicht\s+(?:\w+\s+)?(?:senden|schicken|abschicken|versenden)\b|\b(?:sende|schicke)\s+(?:sie|es|ihn)?\s*(?:noch\s+)?nicht\b/i.test(raw)
  )
    out.add('send');
  if (/\bno\s+(?:lo\s+|la\s+)?(?:envíes|envies|mandes|enviar)\b|\bsin\s+enviar(?:lo|la)?\b/i.test(raw)) out.add('send');
  if (out.has('send')) {
    out.add('email');
    out.add('mail');
  }
  return out;
}

/** What to say for each required field nobody filled, in the user's words. */
const HOW_TO_SAY: Record<string, string> = {
  owner: 'the repository as owner/name (e.g. acme/api)',
  repo: 'the repository as owner/name (e.g. acme/api)',
  issue_number: 'the issue number (e.g. #42)',
  pull_number: 'the pull request number (e.g. PR #42)',
  title: 'a title in quotes (e.g. titled "Login fails")',
  body: 'the text in quotes (e.g. saying "Thanks, fixed in 1.2")',
  text: 'the message in quotes (e.g. saying "Deploy done")',
  channel: 'the Slack channel (e.g. #eng)',
  user: 'the person as @handle or email address',
  users: 'the people to invite as @handles or email addresses',
  name: 'the name in quotes (e.g. called "design-team")',
  to: "the recipient's email address",
  subject: 'a subject (e.g. with subject "Q2 offsite")',
  query: 'what to search for, in quotes',
  start: 'the date and time (e.g. tomorrow at 3pm, or 2026-05-04 10:00 Europe/Berlin)',
  summary: 'a title for the event in quotes',
  time_min: 'the day or time range (e.g. Thursday between 2 and 4pm)',
  time_max: 'the day or time range (e.g. Thursday between 2 and 4pm)',
  url: 'the full URL (https://…)',
  json: 'the JSON body in quotes',
  page_id: 'the Notion page, by its title in quotes or its id',
  parent_id: 'where to create it: the Notion database or page, by its title in quotes or its id',
  database_id: 'the Notion database, by its name in quotes or its id',
  content: 'the text to add, in quotes',
  message_id: 'which email to answer (e.g. the latest email from bob@example.com)',
  labels: 'the labels in quotes (e.g. label "bug")',
  items: "the list to work on (list something first, e.g. 'List the open issues in acme/api then count them')",
  values: 'the values to join (list something first)',
  field: 'the field to take, in quotes',
  event_id: 'which event: its time (e.g. "my 3pm tomorrow") or its title in quotes',
  start_date: 'the day or days (e.g. on Friday, or from the 2nd to the 5th)',
  thread_ts: 'which message to reply to (e.g. the latest message in #eng)',
};

export function missingInput(missing: { step: number; tool: string; action: string; field: string }[]): Refusal {
  const fields = [...new Set(missing.map((m) => HOW_TO_SAY[m.field] ?? `the ${m.field.replace(/_/g, ' ')}`))];
  const first = missing[0];
  return {
    code: 'missing_input',
    message: `The request is missing ${fields.join('; and ')}${first ? ` (for ${first.tool}.${first.action})` : ''}.`,
    suggestion: `Say ${fields.join(', and ')} in the prompt.`,
    missing: missing.map((m) => `step ${m.step} (${m.tool}.${m.action}): ${m.field}`),
  };
}

const conditionPatterns = new Map<Lang, RegExp>();
/**
 * A condition word inside an instruction: not in a question or a request to check ("check if I'm
 * free", "ask #eng if anyone can review", "tell me whether …"), nor "if needed" / "if possible".
 */
function conditionPattern(lang: Lang): RegExp {
  let re = conditionPatterns.get(lang);
  if (!re) {
    const words = wordsOf(lang, 'conditions')
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+'))
      .join('|');
    re = new RegExp(
      `^(?!\\s*(?:please\\s+)?(?:can you\\s+)?(?:check|see|ask|find out|know|tell me|let me know|is|am|are|do|does|did|verify|confirm|look)\\b)(?!.*\\b(?:check|see|ask|whether|know|wonder|saying|say|that)\\s+(?:\\S+\\s+){0,3}?(?:${words})\\b).*\\b(?:${words})\\s+(?!(?:so|not|needed|necessary|possible|you can|you could|any|applicable)\\b)\\S`,
      'iu',
    );
    conditionPatterns.set(lang, re);
  }
  return re;
}

/**
 * A clause that waits on what has not happened ("merge PR 12 if the tests pass"), read in the
 * instruction only: a quoted or cut-out message and a statement of intention ("LGTM, I'll merge
 * after CI passes") are not instructions.
 */
export function refuseWaiting(clauses: readonly Clause[], lang: Lang): Refusal | undefined {
  const conditions = conditionPattern(lang);
  const waiting = clauses.find((clause) => {
    const c = clause.canon.replace(/⟦\d+⟧/g, ' ');
    // "see if PR 3 is merged", "check whether the build passed": a question, not a wait.
    const asks =
      /^\s*(?:please\s+)?(?:can you\s+)?(?:check|see|ask|find out|know|tell me|let me know|verify|confirm|look)\b|\b(?:check|see|ask|whether|know|wonder)\s+(?:\S+\s+){0,3}?(?:if|when)\b/.test(
        c,
      );
    if (!asks && WAITS_ON.test(c) && !/^\s*when\s+(?:is|are|was|were|will|do|does|did)\b/.test(c)) return true;
    // "merge PR 12 if the tests pass", "fusiona el PR 12 si pasan los tests": an instruction under a condition.
    const raw = clause.raw.toLowerCase().replace(/⟦\d+⟧/g, ' ');
    // English is read in its corrected form ("chek if im free"); another language in its own words too.
    return !clause.stated && (conditions.test(c) || (lang !== 'en' && conditions.test(raw)));
  });
  if (!waiting) return undefined;
  return {
    code: 'unsupported_request',
    message:
      'The request waits on something that has not happened yet ("if the tests pass", "after the deploy is done"); the service runs a request now, every step of it.',
    suggestion: 'Create the task when it has happened (for example from your own webhook handler), e.g. "Merge PR 12 in acme/api"',
  };
}
