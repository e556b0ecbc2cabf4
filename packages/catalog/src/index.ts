import { DATA_TOOL } from './tools/data/definition.js';
import { GITHUB_TOOL } from './tools/github/definition.js';
import { GMAIL_TOOL } from './tools/gmail/definition.js';
import { GOOGLE_CALENDAR_TOOL } from './tools/google_calendar/definition.js';
import { HTTP_TOOL } from './tools/http/definition.js';
import { NOTION_TOOL } from './tools/notion/definition.js';
import { SLACK_TOOL } from './tools/slack/definition.js';
import { TEXT_TOOL } from './tools/text/definition.js';
import type { ActionDef, ToolDef } from './types.js';

export type { ActionDef, SideEffect, ToolDef } from './types.js';
export * from './references.js';
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
