import { findAction } from '@tes/catalog';
import { ACTION_WORDS } from './intents.js';
import type { PlanState } from './slots.js';
import type { Missing } from './sources.js';
import { QUOTE, type Clause, type Prepared } from './text.js';

/**
 * Details said after the step they belong to ("The subject can be 'Q1'.", "label it bug", "call it
 * X", "and copy y@z", "… and don't send them a cancellation notice"): they go into that step.
 */

/** "…, and don't send them a cancellation notice": a detail of the step before, said as a negation. */
export function amendNegated(clause: Clause, state: PlanState): void {
  const last = state.steps[state.steps.length - 1];
  if (
    last?.action === 'delete_event' &&
    /\b(?:notify|notice|notification|email|emails|mail|tell|cancellation|invite|invites|attendees|them)\b/.test(clause.canon)
  )
    last.input['notify_attendees'] = false;
}

/**
 * A clause that only adds a detail to the step before it ("The subject can be 'Q1 receipts'.",
 * "just the first 10", "last 10 messages please"): the detail goes into that step.
 */
export function amendsPrevious(clause: Clause, prepared: Prepared, state: PlanState, missing: Missing[]): boolean {
  const last = state.steps[state.steps.length - 1];
  if (!last) return false;
  // "… and also send it to the channel": a thread reply shown in the channel too.
  if (
    last.action === 'reply_in_thread' &&
    /^(?:and\s+)?(?:also\s+)?(?:send|post|share|show)\s+it\s+(?:to|in)\s+the\s+channel\b/i.test(clause.raw.trim())
  ) {
    last.input['also_send_to_channel'] = true;
    return true;
  }
  // "… and copy teamlead@acme.io": more recipients in copy of the email before.
  const copy = /^(?:and\s+)?(?:copy|cc|cc'?ing)\s+((?:⟨\d+⟩(?:\s*(?:,|and|&)\s*)?)+)(?:,?\s+with\s+the\s+note\s+⟦(\d+)⟧)?\s*$/i.exec(
    clause.raw.trim(),
  );
  if (copy?.[1] && last.tool === 'gmail' && /^(?:send_email|forward_email|create_draft)$/.test(last.action)) {
    const cc = [...copy[1].matchAll(/⟨(\d+)⟩/g)].map((m) => prepared.entities[Number(m[1])]).filter((e) => e?.kind === 'email');
    if (cc.length) {
      last.input['cc'] = [...((last.input['cc'] as string[] | undefined) ?? []), ...cc.map((e) => e?.value ?? '')];
      if (copy[2] && last.action === 'forward_email') last.input['note'] = prepared.quotes[Number(copy[2])]?.text;
      return true;
    }
  }
  // "email rob@x.io, subject '…', tell him the payment went out": the message of that email.
  const tell = /^(?:and\s+)?(?:tell|let)\s+(?:him|her|them)(?:\s+know)?(?:\s+that)?\s*⟦(\d+)⟧$/i.exec(clause.raw.trim());
  if (tell?.[1] && last.tool === 'gmail' && /^(?:send_email|create_draft)$/.test(last.action) && last.input['body'] === undefined) {
    last.input['body'] = prepared.quotes[Number(tell[1])]?.text;
    for (let i = missing.length - 1; i >= 0; i--)
      if (missing[i]?.step === state.steps.length - 1 && missing[i]?.field === 'body') missing.splice(i, 1);
    return true;
  }
  // "open a bug in X: … label it bug and p1": labels of the issue being created.
  const labelIt = /^(?:and\s+)?(?:label|tag|mark)\s+it\s+(?:as\s+|with\s+)?(.+)$/i.exec(clause.raw.trim());
  if (labelIt?.[1] && last.action === 'create_issue' && last.input['labels'] === undefined) {
    const quoted = [...labelIt[1].matchAll(QUOTE)].map((m) => prepared.quotes[Number(m[1])]?.text).filter((t): t is string => !!t);
    const labels = quoted.length
      ? quoted
      : labelIt[1]
          .split(/\s*(?:,|\band\b|&)\s*/)
          .map((w) => w.trim())
          .filter((w) => /^[\p{L}\p{N}_:.-]+$/u.test(w));
    if (labels.length) {
      last.input['labels'] = labels;
      return true;
    }
  }
  // "…, call it board-prep": the name of what the step before creates.
  const namedRaw = /^(?:and\s+)?(?:call|name|title)\s+it\s+(?:#?([\p{L}\p{N}_.-]+)|⟦(\d+)⟧)$/iu.exec(clause.raw.trim());
  const named = namedRaw && [namedRaw[0], namedRaw[1] ?? prepared.quotes[Number(namedRaw[2])]?.text];
  const props = (findAction(last.tool, last.action)?.input as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const field = ['summary', 'title', 'name'].find((f) => f in props);
  if (named?.[1] && field && /^create_/.test(last.action)) {
    last.input[field] = field === 'name' && last.tool === 'slack' ? named[1].toLowerCase() : named[1];
    if (last.tool === 'slack') state.channel = named[1].toLowerCase();
    for (let i = missing.length - 1; i >= 0; i--)
      if (missing[i]?.step === state.steps.length - 1 && missing[i]?.field === field) missing.splice(i, 1);
    return true;
  }
  if (clause.words.some((w) => ACTION_WORDS.has(w) && w !== 'let')) return false;
  const subject =
    /^(?:and\s+)?(?:the\s+)?(subject|title|body|description|message|text)\s*(?:line\s*)?(?:can be|could be|should be|is|will be|must be|:)\s*⟦(\d+)⟧/i.exec(
      clause.raw.trim(),
    );
  if (subject?.[1] && subject[2]) {
    const said = subject[1].toLowerCase();
    const text = prepared.quotes[Number(subject[2])]?.text;
    const field =
      said === 'title' && last.tool === 'gmail'
        ? 'subject'
        : ['description', 'message', 'text'].includes(said)
          ? (['text', 'body', 'content'].find((f) => f in last.input) ?? 'body')
          : said;
    if (text === undefined || !(field in last.input || ['subject', 'title', 'body'].includes(field))) return false;
    last.input[field] = text;
    // What was missing from that step is given now.
    const index = state.steps.length - 1;
    for (let i = missing.length - 1; i >= 0; i--) if (missing[i]?.step === index && missing[i]?.field === field) missing.splice(i, 1);
    return true;
  }
  if (
    last.action === 'close_issue' &&
    /\b(?:not planned|will not fix|won'?t fix|wontfix|duplicate|obsolete)\b/.test(
      `${clause.canon} ${clause.raw.toLowerCase().replace(/[’`]/g, "'")}`,
    )
  ) {
    last.input['reason'] = 'not_planned';
    return true;
  }
  const count = /^(?:just\s+|only\s+)?(?:the\s+)?(?:first|last|top|latest|newest)\s+(\d{1,3})\b(?:\s+[a-z]+)?(?:\s+please)?$/i.exec(
    clause.canon.trim(),
  );
  if (count?.[1] && /^(?:list|search|query)/.test(last.action) && last.input['limit'] === undefined) {
    last.input['limit'] = Number(count[1]);
    return true;
  }
  return false;
}
