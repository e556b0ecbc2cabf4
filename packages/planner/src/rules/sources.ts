import type { Intent, ToolEntry } from './intents.js';
import { fillInput } from './fields.js';
import { previousData, slotsOf, type PlanState, type StepDraft } from './slots.js';
import { QUOTE, type Clause } from './text.js';

/** A required input nobody filled, for the missing_input refusal. */
export interface Missing {
  step: number;
  tool: string;
  action: string;
  field: string;
}

/** Read actions a delivery can take its content from, by the data they name. */
const SOURCES: { action: string; test: RegExp }[] = [
  { action: 'github.list_pull_requests', test: /\b(?:pull requests|prs|merge requests)\b/ },
  { action: 'github.list_issues', test: /\b(?:issues|bugs|tickets)\b/ },
  { action: 'google_calendar.list_events', test: /\b(?:events|meetings|appointments|agenda|schedule)\b/ },
  { action: 'gmail.search_email', test: /\b(?:emails|mails|inbox)\b/ },
  { action: 'slack.list_channels', test: /\bchannels\b/ },
  { action: 'notion.get_page', test: /\b(?:contents?|page)\b.*⟦|\bnotion page\b/ },
  // "post the contents of https://… to #news"; a bare link to post is the message itself.
  { action: 'http.fetch', test: /\b(?:contents?|body|text|data|response|json|output|results?|what is (?:at|on))\b[^⟨]*⟨\d+⟩/ },
];

export function planSource(
  clause: Clause,
  delivery: Intent,
  state: PlanState,
  catalog: readonly ToolEntry[],
  add: (s: StepDraft) => number,
  missing: Missing[],
): void {
  const key = `${delivery.tool.name}.${delivery.action.name}`;
  // A literal text to send, or an earlier step to refer to, means there is no source to plan here.
  const quotes = [...clause.raw.matchAll(QUOTE)].map((m) => state.quotes[Number(m[1])]);
  if (quotes.some((q) => q && (q.role === 'body' || q.role === 'colon'))) return;
  if (previousData(state) && /\b(?:it|them|those|these|that|the results?|the list)\b/.test(clause.canon)) return;
  const canon = clause.canon;
  for (const source of SOURCES) {
    const [toolName = '', actionName = ''] = source.action.split('.');
    if (toolName === delivery.tool.name && !/^(?:list|search)/.test(actionName)) continue;
    if (source.action === 'http.fetch' && !state.entities.some((e, i) => e.kind === 'url' && clause.raw.includes(`⟨${i}⟩`))) continue;
    if (source.action === 'gmail.search_email' && key.startsWith('gmail.')) continue;
    // "create a notion page titled X in the Meetings database": a page made carries data only when asked ("listing the open issues").
    if (key === 'notion.create_page' && !/\b(?:contents?|listing|list of|containing|with (?:the|my|all|our))\b/.test(canon)) return;
    // A source of the delivery's own tool is what the delivery acts on ("comment on issues 4 and 5"), except a list of channels.
    if (
      toolName === delivery.tool.name &&
      !(source.action === 'slack.list_channels' && /\b(?:list of|all|my)\s+(?:\w+\s+)?channels\b/.test(canon))
    )
      continue;
    if (!source.test.test(canon)) continue;
    const entry = catalog.find((c) => c.tool.name === toolName);
    const action = entry?.tool.actions.find((a) => a.name === actionName);
    if (!entry || !action) continue;
    const slots = slotsOf(clause, state);
    const filled = fillInput(entry.tool, action, slots, add);
    const index = add({ tool: toolName, action: actionName, input: filled.input });
    state.sourced = true;
    const noun = source.test.exec(canon)?.[0];
    if (noun && !noun.includes('⟦') && !noun.includes('⟨'))
      state.topic ??= `${noun.charAt(0).toUpperCase()}${noun.slice(1)}${state.repo ? ` of ${state.repo}` : ''}`;
    for (const field of filled.missing) missing.push({ step: index, tool: toolName, action: actionName, field });
    return;
  }
}
