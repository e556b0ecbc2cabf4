import { findAction } from '@tes/catalog';
import type { StepRun } from '@tes/contracts';
import type { TaskFailureCode } from '@tes/errors';

/**
 * What a failed step tells the user to do, in the words of the request rather than the
 * input's field names. A field's wording comes from its JSON Schema (`description`, else
 * the name made readable); the commonest fields have their own, with an example.
 */

interface FieldWords {
  /** What the user calls it. */
  label: string;
  /** What to add to the request. */
  say: string;
}

const REPOSITORY: FieldWords = { label: 'repository', say: 'Name the repository as owner/name, e.g. "acme/webapp"' };
const TEXT: FieldWords = { label: 'text', say: 'Say what it should say, e.g. saying "Agenda to follow"' };

const COMMON: Record<string, FieldWords> = {
  owner: REPOSITORY,
  repo: REPOSITORY,
  issue_number: { label: 'issue number', say: 'Give the issue number, e.g. "issue #12"' },
  pull_number: { label: 'pull request number', say: 'Give the pull request number, e.g. "PR #7"' },
  to: { label: "recipient's email address", say: 'Give the recipient\'s email address, e.g. "to bob@example.com"' },
  cc: { label: 'email address to copy', say: 'Give the email addresses to copy, e.g. "cc alice@example.com"' },
  subject: { label: 'subject', say: 'Add a subject, e.g. with the subject "Q2 offsite"' },
  body: TEXT,
  content: TEXT,
  text: { label: 'message text', say: 'Say what the message should say, e.g. saying "happy friday everyone"' },
  title: { label: 'title', say: 'Add a title, e.g. titled "Login fails on Safari"' },
  channel: { label: 'channel', say: 'Name the channel, e.g. "#general"' },
  user: { label: 'person', say: 'Name the person, e.g. "@alice" or "alice@example.com"' },
  users: { label: 'people', say: 'Name the people, e.g. "@alice and @bob"' },
  summary: { label: 'event title', say: 'Give the event a title, e.g. called "Team sync"' },
  start: { label: 'start time', say: 'Say when it starts, with a date and a time, e.g. "tomorrow at 10:00"' },
  end: { label: 'end time', say: 'Say when it ends, e.g. "until 11:00"' },
  query: { label: 'search words', say: 'Say what to search for, e.g. "from:alice@example.com invoice"' },
  page_id: { label: 'Notion page', say: 'Name the Notion page by its link or id' },
  parent_id: { label: 'Notion page or database', say: 'Name the Notion page or database to put it in, by its link or id' },
  database_id: { label: 'Notion database', say: 'Name the Notion database by its link or id' },
  message_id: { label: 'email', say: 'Say which email to answer, e.g. "the latest email from alice@example.com"' },
  url: { label: 'address', say: 'Give the full address, e.g. "https://example.com/report"' },
};

interface PropSchema {
  description?: string;
  type?: string | string[];
  format?: string;
}

/** The input schema of the step's action (built-in or custom); {} when unknown. */
export function inputSchemaOf(step: Pick<StepRun, 'tool' | 'action' | 'custom'>): object {
  return step.custom?.input_schema ?? findAction(step.tool, step.action)?.input ?? {};
}

function propOf(schema: object, field: string): PropSchema | undefined {
  return (schema as { properties?: Record<string, PropSchema> }).properties?.[field];
}

/** How the user says a field: the common wording, else the schema's description, else the readable name. */
export function fieldWords(field: string, schema: object): FieldWords {
  const common = COMMON[field];
  if (common) return common;
  const description = propOf(schema, field)?.description?.trim();
  const label = description ? description.charAt(0).toLowerCase() + description.slice(1) : readable(field);
  return { label, say: `Give the ${label}` };
}

function readable(field: string): string {
  return field
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .replace(/\bids?\b/gi, 'id')
    .trim()
    .toLowerCase();
}

/** The subset of ajv's ErrorObject read here. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
}

/**
 * What to change in the request when the input does not fit the action's schema (the
 * first error ajv reports; "at least one of" when every branch of an anyOf failed).
 */
export function inputAdvice(errors: readonly SchemaError[] | null | undefined, input: Record<string, unknown>, schema: object): string {
  const anyOf = errors?.find((e) => (e.keyword === 'anyOf' || e.keyword === 'oneOf') && e.instancePath === '');
  if (anyOf) {
    const missing = [...new Set((errors ?? []).filter((e) => e.keyword === 'required').map((e) => String(e.params['missingProperty'])))];
    if (missing.length > 1) return `Say at least one of: ${orList(missing.map((f) => `the ${fieldWords(f, schema).label}`))}`;
  }
  const e = errors?.[0];
  if (!e) return 'Check the details in the request and create the task again';
  const segments = e.instancePath.split('/').filter(Boolean);
  if (e.keyword === 'required' && segments.length === 0) return fieldWords(String(e.params['missingProperty']), schema).say;
  if (e.keyword === 'additionalProperties' && segments.length === 0) {
    return `Leave out "${String(e.params['additionalProperty'])}": this action does not take it`;
  }
  const field = segments[0] ?? '';
  const words = fieldWords(field, schema);
  const value = valueAt(input, segments);
  const shown = typeof value === 'string' ? `"${value.length > 60 ? `${value.slice(0, 57)}…` : value}"` : JSON.stringify(value);
  switch (e.keyword) {
    case 'required':
    case 'minLength':
    case 'minItems':
      return words.say;
    case 'enum':
      return `Use one of ${orList((e.params['allowedValues'] as unknown[]).map(String))} for the ${words.label}`;
    case 'maxLength':
      return `Shorten the ${words.label} to at most ${String(e.params['limit'])} characters`;
    case 'maxItems':
      return `Give at most ${String(e.params['limit'])} for the ${words.label}`;
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum':
      return `${capitalise(words.label)} ${shown} is out of range (${e.params['comparison'] as string} ${String(e.params['limit'])}). ${words.say}`;
    case 'format':
      return `${shown} is not ${formatWords(String(e.params['format']))}. ${words.say}`;
    default:
      // pattern, type, const …: the value is not usable as this field.
      return `${shown} is not a valid ${words.label}. ${words.say}`;
  }
}

function formatWords(format: string): string {
  if (format === 'email') return 'an email address';
  if (format === 'date-time') return 'a date with a time';
  if (format === 'date') return 'a date';
  if (format === 'uri' || format === 'url') return 'a web address';
  return `a valid ${format}`;
}

function valueAt(input: unknown, path: readonly string[]): unknown {
  let v = input;
  for (const key of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

/**
 * The things the step acts on, as the user names them ("the repository acme/api",
 * "issue #3", "the channel #general"): its identifying inputs (the common ones, and any
 * `…_id`/`…_number`/`…_ids` field).
 */
export function targetsOf(input: Record<string, unknown>, schema: object): string[] {
  const out: string[] = [];
  if (typeof input['owner'] === 'string' && typeof input['repo'] === 'string')
    out.push(`the repository ${input['owner']}/${input['repo']}`);
  for (const [field, v] of Object.entries(input)) {
    if (v === undefined || v === null || v === '' || field === 'owner' || field === 'repo') continue;
    const value = Array.isArray(v) ? v.map((x) => shownValue(x)).join(', ') : shownValue(v);
    if (field === 'issue_number') out.push(`issue #${value}`);
    else if (field === 'pull_number') out.push(`pull request #${value}`);
    // A Slack channel id (C0123ABCD) as it is, a name with its #.
    else if (field === 'channel') out.push(`the channel ${/^[CDG][A-Z0-9]{6,}$/.test(value) ? value : `#${value.replace(/^#/, '')}`}`);
    else if (field === 'user' || field === 'users' || field === 'url' || /_(?:id|ids|number)$/.test(field)) {
      out.push(`the ${fieldWords(field, schema).label} "${value}"`);
    }
  }
  return out;
}

/** A provider answered 404 (or its "not found"): which thing, and what to check. */
export function notFoundAdvice(
  step: Pick<StepRun, 'tool' | 'action' | 'custom'>,
  input: Record<string, unknown>,
  service: string,
  accessHint?: string,
): string {
  const things = targetsOf(input, inputSchemaOf(step));
  const access = accessHint ? ` (${service} needs ${accessHint})` : '';
  if (things.length === 0)
    return `Check the names in the request, and that the connected ${service} account can see what they name${access}`;
  const one = things.length === 1;
  return (
    `Check that ${andList(things)} ${one ? 'exists' : 'exist'}, that ${one ? 'its name is' : 'their names are'} spelled right, ` +
    `and that the connected ${service} account can see ${one ? 'it' : 'them'}${access}`
  );
}

/** The provider refused the request as it stands (400/422 …), or reported a conflict (409). */
export function rejectedAdvice(
  step: Pick<StepRun, 'tool' | 'action' | 'custom'>,
  input: Record<string, unknown>,
  service: string,
  conflict: boolean,
  detail?: string,
): string {
  const things = targetsOf(input, inputSchemaOf(step));
  const about = things.length ? ` for ${andList(things)}` : '';
  if (conflict) {
    return `${capitalise(service)} reports a conflict with the current state${about} (it may already exist or have changed meanwhile): check it in ${service}, then retry the task`;
  }
  const said = detail ? ` (it says: "${detail}")` : '';
  return `${capitalise(service)} did not accept the request${about}${said}: correct the details in the request and create the task again`;
}

/** An `{{steps.N.output…}}` placeholder in `field` could not be resolved. */
export function referenceAdvice(field: string | undefined, schema: object): string {
  if (!field) return 'Name the value in the request itself instead of taking it from an earlier step';
  const words = fieldWords(field, schema);
  return `An earlier step's result has no ${words.label} to use here; name it in the request instead. ${words.say}`;
}

/** Access refused or lost: reconnect the service (granting `needs` when known). */
export function reconnectAdvice(service: string, needs?: string, authUrl?: string): string {
  const where = authUrl ? ` at ${authUrl}` : '';
  return `Reconnect ${service} for the user (re-authorize it${where})${needs ? ` granting ${needs}` : ''}, then retry the task`;
}

export function rateLimitAdvice(service: string, retryAfterMs: number | undefined): string {
  if (retryAfterMs === undefined) return `${capitalise(service)} limits how many requests it accepts; retry the task in a minute`;
  return `${capitalise(service)} limits how many requests it accepts; retry the task after ${waitWords(retryAfterMs)}`;
}

function waitWords(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000));
  if (s < 120) return `${s} s`;
  const min = Math.ceil(s / 60);
  return min < 120 ? `${min} minutes` : `${Math.ceil(min / 60)} hours`;
}

export function unavailableAdvice(service: string): string {
  return `${capitalise(service)} is not answering right now; retry the task in a few minutes`;
}

/** A step that overran its time: retry, but look first when it may have acted. */
export function timeoutAdvice(step: Pick<StepRun, 'tool' | 'action' | 'custom' | 'timeout_ms'>, service: string): string {
  const sideEffect = step.custom ? step.custom.method !== 'GET' : findAction(step.tool, step.action)?.side_effect !== 'read';
  const retry = sideEffect ? `it may have taken effect, so check ${service} before retrying the task` : 'retry the task';
  return `${capitalise(service)} took longer than ${waitWords(step.timeout_ms)} to answer; ${retry}`;
}

/**
 * The suggestion for a failure that came without one (a tool's own ToolError, an
 * unexpected fault): by its code, and for "not found" by what the step names.
 */
export function fallbackAdvice(
  failure: { code: TaskFailureCode; message: string },
  step: Pick<StepRun, 'tool' | 'action' | 'custom' | 'timeout_ms'>,
  input: Record<string, unknown>,
  service: string,
): string {
  switch (failure.code) {
    case 'service_unavailable':
      return unavailableAdvice(service);
    case 'rate_limited':
      return rateLimitAdvice(service, undefined);
    case 'step_timeout':
      return timeoutAdvice(step, service);
    case 'auth_token_expired':
      return reconnectAdvice(service);
    case 'permission_denied':
      return reconnectAdvice(service, 'the access this action needs');
    case 'invalid_credentials':
      return `Check the ${service} OAuth client id and secret configured for the service`;
    default:
      if (/\bnot found\b/i.test(failure.message)) return notFoundAdvice(step, input, service);
      return 'Check the details in the request (names, numbers, addresses) and create the task again';
  }
}

function shownValue(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function andList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1) ?? ''}`;
}

function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1) ?? ''}`;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
