import { githubApi } from './github/api.js';
import { gmailApi } from './gmail/api.js';
import { googleCalendarApi } from './google_calendar/api.js';
import { notionApi } from './notion/api.js';
import { slackApi } from './slack/api.js';

/**
 * The provider APIs of the live tools, by OAuth service: each tool's folder describes its own
 * (api.ts); the configuration schema, the default settings and the names in messages follow.
 */
export const PROVIDER_APIS = {
  github: githubApi,
  slack: slackApi,
  google_calendar: googleCalendarApi,
  gmail: gmailApi,
  notion: notionApi,
} as const;

export type ProviderName = keyof typeof PROVIDER_APIS;
export type ProviderUrlVariable = (typeof PROVIDER_APIS)[ProviderName]['urlVariable'];

const NAMES = Object.keys(PROVIDER_APIS) as ProviderName[];

export function isProviderName(service: string): service is ProviderName {
  return Object.hasOwn(PROVIDER_APIS, service);
}

/** One value per provider API, e.g. its base URL from the configuration. */
export function perProvider<V>(value: (api: (typeof PROVIDER_APIS)[ProviderName]) => V): Record<ProviderName, V> {
  return Object.fromEntries(NAMES.map((n) => [n, value(PROVIDER_APIS[n])])) as Record<ProviderName, V>;
}

export const PROVIDER_URL_VARIABLES: readonly ProviderUrlVariable[] = NAMES.map((n) => PROVIDER_APIS[n].urlVariable);
