import { DATA_TOOL } from './tools/data/definition.js';
import { GITHUB_TOOL } from './tools/github/definition.js';
import { GMAIL_TOOL } from './tools/gmail/definition.js';
import { GOOGLE_CALENDAR_TOOL } from './tools/google_calendar/definition.js';
import { HTTP_TOOL } from './tools/http/definition.js';
import { NOTION_TOOL } from './tools/notion/definition.js';
import { SLACK_TOOL } from './tools/slack/definition.js';
import { TEXT_TOOL } from './tools/text/definition.js';
import { DATA_HINTS } from './tools/data/hints.js';
import { GITHUB_HINTS } from './tools/github/hints.js';
import { GMAIL_HINTS } from './tools/gmail/hints.js';
import { GOOGLE_CALENDAR_HINTS } from './tools/google_calendar/hints.js';
import { HTTP_HINTS } from './tools/http/hints.js';
import { NOTION_HINTS } from './tools/notion/hints.js';
import { SLACK_HINTS } from './tools/slack/hints.js';
import { TEXT_HINTS } from './tools/text/hints.js';
import type { ActionDef, ToolDef, ToolHints } from './types.js';

export type { ActionDef, ActionHints, ToolDef, ToolHints } from './types.js';
export * from './references.js';
export { BUILT_IN_LANGUAGES } from './languages.js';
export { DATA_TOOL, GITHUB_TOOL, GMAIL_TOOL, GOOGLE_CALENDAR_TOOL, HTTP_TOOL, NOTION_TOOL, SLACK_TOOL, TEXT_TOOL };

/** Catalog order is also the planner's tie-break order. */
export const BUILT_IN_TOOLS: readonly ToolDef[] = [
  GITHUB_TOOL,
  SLACK_TOOL,
  GOOGLE_CALENDAR_TOOL,
  GMAIL_TOOL,
  NOTION_TOOL,
  HTTP_TOOL,
  TEXT_TOOL,
  DATA_TOOL,
];

export function findTool(name: string, tools: readonly ToolDef[] = BUILT_IN_TOOLS): ToolDef | undefined {
  return tools.find((t) => t.name === name);
}

export function findAction(tool: string, action: string, tools: readonly ToolDef[] = BUILT_IN_TOOLS): ActionDef | undefined {
  return findTool(tool, tools)?.actions.find((a) => a.name === action);
}

/** The OAuth service a step needs a user connection for, or null. */
export function serviceOf(tool: string, tools: readonly ToolDef[] = BUILT_IN_TOOLS): string | null {
  return findTool(tool, tools)?.service ?? null;
}

/** The rules planner's hints for each built-in tool (custom tools get theirs from their keywords). */
export const BUILT_IN_HINTS: Readonly<Record<string, ToolHints>> = {
  github: GITHUB_HINTS,
  slack: SLACK_HINTS,
  google_calendar: GOOGLE_CALENDAR_HINTS,
  gmail: GMAIL_HINTS,
  notion: NOTION_HINTS,
  http: HTTP_HINTS,
  text: TEXT_HINTS,
  data: DATA_HINTS,
};
