/**
 * Every tool's language data (`tools/<tool>/language/<lang>.json`), as the rules planner reads it.
 * Adding a language: a data file in each tool's folder and its line here (`languages.test.ts`
 * fails when a file is not listed).
 */
import type { ToolLanguage } from './types.js';
import dataEn from './tools/data/language/en.json' with { type: 'json' };
import githubEn from './tools/github/language/en.json' with { type: 'json' };
import gmailEn from './tools/gmail/language/en.json' with { type: 'json' };
import googleCalendarEn from './tools/google_calendar/language/en.json' with { type: 'json' };
import httpEn from './tools/http/language/en.json' with { type: 'json' };
import notionEn from './tools/notion/language/en.json' with { type: 'json' };
import slackEn from './tools/slack/language/en.json' with { type: 'json' };
import textEn from './tools/text/language/en.json' with { type: 'json' };

type Languages = Readonly<Record<string, Readonly<Record<string, ToolLanguage>>>>;

/** tool → language code → its phrases. */
export const BUILT_IN_LANGUAGES: Languages = {
  github: { en: githubEn },
  slack: { en: slackEn },
  google_calendar: { en: googleCalendarEn },
  gmail: { en: gmailEn },
  notion: { en: notionEn },
  http: { en: httpEn },
  text: { en: textEn },
  data: { en: dataEn },
};
