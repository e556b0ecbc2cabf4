/**
 * Every tool's language data (`tools/<tool>/language/<lang>.json`), as the rules planner reads it.
 * Adding a language: a data file in each tool's folder and its line here (`languages.test.ts`
 * fails when a file is not listed).
 */
import type { ToolLanguage } from './types.js';
import dataEn from './tools/data/language/en.json' with { type: 'json' };
import dataFr from './tools/data/language/fr.json' with { type: 'json' };
import dataDe from './tools/data/language/de.json' with { type: 'json' };
import dataEs from './tools/data/language/es.json' with { type: 'json' };
import dataPt from './tools/data/language/pt.json' with { type: 'json' };
import dataIt from './tools/data/language/it.json' with { type: 'json' };
import dataNl from './tools/data/language/nl.json' with { type: 'json' };
import githubEn from './tools/github/language/en.json' with { type: 'json' };
import githubFr from './tools/github/language/fr.json' with { type: 'json' };
import githubDe from './tools/github/language/de.json' with { type: 'json' };
import githubEs from './tools/github/language/es.json' with { type: 'json' };
import githubPt from './tools/github/language/pt.json' with { type: 'json' };
import githubIt from './tools/github/language/it.json' with { type: 'json' };
import githubNl from './tools/github/language/nl.json' with { type: 'json' };
import gmailEn from './tools/gmail/language/en.json' with { type: 'json' };
import gmailFr from './tools/gmail/language/fr.json' with { type: 'json' };
import gmailDe from './tools/gmail/language/de.json' with { type: 'json' };
import gmailEs from './tools/gmail/language/es.json' with { type: 'json' };
import gmailPt from './tools/gmail/language/pt.json' with { type: 'json' };
import gmailIt from './tools/gmail/language/it.json' with { type: 'json' };
import gmailNl from './tools/gmail/language/nl.json' with { type: 'json' };
import googleCalendarEn from './tools/google_calendar/language/en.json' with { type: 'json' };
import googleCalendarFr from './tools/google_calendar/language/fr.json' with { type: 'json' };
import googleCalendarDe from './tools/google_calendar/language/de.json' with { type: 'json' };
import googleCalendarEs from './tools/google_calendar/language/es.json' with { type: 'json' };
import googleCalendarPt from './tools/google_calendar/language/pt.json' with { type: 'json' };
import googleCalendarIt from './tools/google_calendar/language/it.json' with { type: 'json' };
import googleCalendarNl from './tools/google_calendar/language/nl.json' with { type: 'json' };
import httpEn from './tools/http/language/en.json' with { type: 'json' };
import httpFr from './tools/http/language/fr.json' with { type: 'json' };
import httpDe from './tools/http/language/de.json' with { type: 'json' };
import httpEs from './tools/http/language/es.json' with { type: 'json' };
import httpPt from './tools/http/language/pt.json' with { type: 'json' };
import httpIt from './tools/http/language/it.json' with { type: 'json' };
import httpNl from './tools/http/language/nl.json' with { type: 'json' };
import notionEn from './tools/notion/language/en.json' with { type: 'json' };
import notionFr from './tools/notion/language/fr.json' with { type: 'json' };
import notionDe from './tools/notion/language/de.json' with { type: 'json' };
import notionEs from './tools/notion/language/es.json' with { type: 'json' };
import notionPt from './tools/notion/language/pt.json' with { type: 'json' };
import notionIt from './tools/notion/language/it.json' with { type: 'json' };
import notionNl from './tools/notion/language/nl.json' with { type: 'json' };
import slackEn from './tools/slack/language/en.json' with { type: 'json' };
import slackFr from './tools/slack/language/fr.json' with { type: 'json' };
import slackDe from './tools/slack/language/de.json' with { type: 'json' };
import slackEs from './tools/slack/language/es.json' with { type: 'json' };
import slackPt from './tools/slack/language/pt.json' with { type: 'json' };
import slackIt from './tools/slack/language/it.json' with { type: 'json' };
import slackNl from './tools/slack/language/nl.json' with { type: 'json' };
import textEn from './tools/text/language/en.json' with { type: 'json' };
import textFr from './tools/text/language/fr.json' with { type: 'json' };
import textDe from './tools/text/language/de.json' with { type: 'json' };
import textEs from './tools/text/language/es.json' with { type: 'json' };
import textPt from './tools/text/language/pt.json' with { type: 'json' };
import textIt from './tools/text/language/it.json' with { type: 'json' };
import textNl from './tools/text/language/nl.json' with { type: 'json' };

type Languages = Readonly<Record<string, Readonly<Record<string, ToolLanguage>>>>;

/** tool → language code → its phrases. */
export const BUILT_IN_LANGUAGES: Languages = {
  github: { en: githubEn, fr: githubFr, de: githubDe, es: githubEs, pt: githubPt, it: githubIt, nl: githubNl },
  slack: { en: slackEn, fr: slackFr, de: slackDe, es: slackEs, pt: slackPt, it: slackIt, nl: slackNl },
  google_calendar: {
    en: googleCalendarEn,
    fr: googleCalendarFr,
    de: googleCalendarDe,
    es: googleCalendarEs,
    pt: googleCalendarPt,
    it: googleCalendarIt,
    nl: googleCalendarNl,
  },
  gmail: { en: gmailEn, fr: gmailFr, de: gmailDe, es: gmailEs, pt: gmailPt, it: gmailIt, nl: gmailNl },
  notion: { en: notionEn, fr: notionFr, de: notionDe, es: notionEs, pt: notionPt, it: notionIt, nl: notionNl },
  http: { en: httpEn, fr: httpFr, de: httpDe, es: httpEs, pt: httpPt, it: httpIt, nl: httpNl },
  text: { en: textEn, fr: textFr, de: textDe, es: textEs, pt: textPt, it: textIt, nl: textNl },
  data: { en: dataEn, fr: dataFr, de: dataDe, es: dataEs, pt: dataPt, it: dataIt, nl: dataNl },
};
