import type { Environment } from '@tes/contracts';
import { githubLive } from './github/live.js';
import { gmailLive } from './gmail/live.js';
import { googleCalendarLive } from './google_calendar/live.js';
import { notionLive } from './notion/live.js';
import { slackLive } from './slack/live.js';
import { githubSandbox } from './github/sandbox.js';
import { gmailSandbox } from './gmail/sandbox.js';
import { googleCalendarSandbox } from './google_calendar/sandbox.js';
import { notionSandbox } from './notion/sandbox.js';
import { slackSandbox } from './slack/sandbox.js';
import { dataActions } from './data.tool.js';
import { httpActions } from './http.tool.js';
import { textActions } from './text.tool.js';
import type { ActionImpl } from './tool.js';

/** Test keys run the sandbox implementation, live keys the live one. */
const IMPLEMENTATIONS: Record<string, Record<Environment, Record<string, ActionImpl>>> = {
  text: { test: textActions, live: textActions },
  data: { test: dataActions, live: dataActions },
  http: { test: httpActions, live: httpActions },
  github: { test: githubSandbox, live: githubLive },
  slack: { test: slackSandbox, live: slackLive },
  google_calendar: { test: googleCalendarSandbox, live: googleCalendarLive },
  gmail: { test: gmailSandbox, live: gmailLive },
  notion: { test: notionSandbox, live: notionLive },
};

export function actionImpl(tool: string, action: string, environment: Environment): ActionImpl | undefined {
  return IMPLEMENTATIONS[tool]?.[environment][action];
}
