import { readSecret, VaultConfigError } from '../domain/secrets.js';

/** How a provider takes a revocation: RFC 7009, or its own API. */
export type RevocationStyle = 'rfc7009' | 'github' | 'slack';

export interface ProviderDef {
  service: string;
  displayName: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** null: the provider has no revocation endpoint (tokens are only deleted here). */
  revocationUrl: string | null;
  revocationStyle: RevocationStyle;
  /** A cheap authenticated GET the health probe makes; null: the probe is a refresh. */
  probeUrl: string | null;
  probeHeaders: Record<string, string>;
  defaultScopes: string[];
  /** How scopes are joined in the authorize request (Slack uses commas). */
  scopeSeparator: string;
  pkce: boolean;
  /** Client authentication at the token endpoint: HTTP Basic or form fields. */
  tokenAuth: 'basic' | 'post';
  /** Body of token requests: form (RFC 6749) or JSON (Notion). */
  tokenBody: 'form' | 'json';
  /** Extra query parameters of the authorize request (e.g. Google's access_type=offline). */
  authorizeParams: Record<string, string>;
  /**
   * Scopes the provider grants only to the user's own token, asked in their own authorize
   * parameter (Slack: `search:read` in `user_scope`; its `scope` holds the app's bot scopes).
   */
  userScopes?: { param: string; scopes: readonly string[] };
}

export interface Provider extends ProviderDef {
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** Client credentials are present: the vault can run this provider's flow. */
  configured: boolean;
  /**
   * Set for a provider an account registered (a custom tool's): its URLs were chosen by a
   * customer, so every call to them goes through the outbound policy of this environment.
   */
  registeredIn?: 'test' | 'live';
}

const google = {
  authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
  tokenUrl: 'https://oauth2.googleapis.com/token',
  revocationUrl: 'https://oauth2.googleapis.com/revoke',
  revocationStyle: 'rfc7009',
  probeHeaders: {},
  scopeSeparator: ' ',
  pkce: true,
  tokenAuth: 'post',
  tokenBody: 'form',
  // Offline access gives a refresh token; include_granted_scopes makes authorization incremental.
  authorizeParams: { access_type: 'offline', prompt: 'consent', include_granted_scopes: 'true' },
} as const;

/** The services with built-in tools. Every URL can be overridden by env (see `loadProviders`). */
export const BUILT_IN_PROVIDERS: readonly ProviderDef[] = [
  {
    service: 'github',
    displayName: 'GitHub',
    authorizeUrl: 'https://github.com/login/oauth/authorize',
    tokenUrl: 'https://github.com/login/oauth/access_token',
    // DELETE /applications/{client_id}/grant with Basic client auth revokes the whole grant.
    revocationUrl: 'https://api.github.com/applications/{client_id}/grant',
    revocationStyle: 'github',
    probeUrl: 'https://api.github.com/user',
    probeHeaders: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
    defaultScopes: ['read:user'],
    scopeSeparator: ' ',
    pkce: true,
    tokenAuth: 'post',
    tokenBody: 'form',
    authorizeParams: {},
  },
  {
    service: 'slack',
    displayName: 'Slack',
    authorizeUrl: 'https://slack.com/oauth/v2/authorize',
    tokenUrl: 'https://slack.com/api/oauth.v2.access',
    revocationUrl: 'https://slack.com/api/auth.revoke',
    revocationStyle: 'slack',
    probeUrl: 'https://slack.com/api/auth.test',
    probeHeaders: {},
    defaultScopes: [],
    scopeSeparator: ',',
    pkce: false,
    tokenAuth: 'post',
    tokenBody: 'form',
    authorizeParams: {},
    // User-token scopes of the built-in actions (slack.search_messages); Slack refuses them in `scope`.
    userScopes: { param: 'user_scope', scopes: ['search:read'] },
  },
  {
    service: 'google_calendar',
    displayName: 'Google Calendar',
    ...google,
    probeUrl: 'https://www.googleapis.com/calendar/v3/users/me/calendarList?maxResults=1',
    // freeBusy.query does not take calendar.events: one consent covers every Calendar action (list, create, update,
    // delete, all-day and check_availability).
    defaultScopes: ['https://www.googleapis.com/auth/calendar.events', 'https://www.googleapis.com/auth/calendar.events.freebusy'],
  },
  {
    service: 'gmail',
    displayName: 'Gmail',
    ...google,
    probeUrl: 'https://gmail.googleapis.com/gmail/v1/users/me/profile',
    defaultScopes: ['https://www.googleapis.com/auth/gmail.readonly'],
  },
  {
    service: 'notion',
    displayName: 'Notion',
    authorizeUrl: 'https://api.notion.com/v1/oauth/authorize',
    tokenUrl: 'https://api.notion.com/v1/oauth/token',
    revocationUrl: null,
    revocationStyle: 'rfc7009',
    probeUrl: 'https://api.notion.com/v1/users/me',
    probeHeaders: { 'notion-version': '2022-06-28' },
    // Notion has no scopes: access is chosen page by page on its consent screen.
    defaultScopes: [],
    scopeSeparator: ' ',
    pkce: false,
    tokenAuth: 'basic',
    tokenBody: 'json',
    authorizeParams: { owner: 'user' },
  },
];

/** Defaults of a custom provider (a custom tool's OAuth service), declared in OAUTH_CUSTOM_PROVIDERS or registered. */
export const CUSTOM_DEFAULTS: Omit<ProviderDef, 'service' | 'displayName' | 'authorizeUrl' | 'tokenUrl'> = {
  revocationUrl: null,
  revocationStyle: 'rfc7009',
  probeUrl: null,
  probeHeaders: {},
  defaultScopes: [],
  scopeSeparator: ' ',
  pkce: true,
  tokenAuth: 'post',
  tokenBody: 'form',
  authorizeParams: {},
};

const SERVICE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** `google_calendar` → `GOOGLE_CALENDAR`: the prefix of that provider's env variables. */
export function envPrefix(service: string): string {
  return service.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** Scopes as a set: trimmed, deduplicated, sorted (so they compare and store stably). */
export function normalizeScopes(scopes: readonly string[]): string[] {
  return [...new Set(scopes.map((s) => s.trim()).filter(Boolean))].sort();
}

export function parseScopeList(value: string): string[] {
  return normalizeScopes(value.split(/[\s,]+/));
}

/**
 * The scope parameters of an authorize request: the provider's user-token scopes in their own
 * parameter (`user_scope`), every other scope in `scope`, each joined as the provider wants.
 */
export function scopeParams(
  provider: Pick<ProviderDef, 'scopeSeparator' | 'userScopes'>,
  scopes: readonly string[],
): Record<string, string> {
  const user = provider.userScopes;
  const asUser = user ? scopes.filter((s) => user.scopes.includes(s)) : [];
  const rest = scopes.filter((s) => !asUser.includes(s));
  return {
    ...(rest.length > 0 ? { scope: rest.join(provider.scopeSeparator) } : {}),
    ...(user && asUser.length > 0 ? { [user.param]: asUser.join(provider.scopeSeparator) } : {}),
  };
}

/** Does `granted` include every scope of `needed`? */
export function coversScopes(granted: readonly string[], needed: readonly string[]): boolean {
  const have = new Set(granted);
  return needed.every((s) => have.has(s));
}

export class ProviderRegistry {
  private readonly byService: ReadonlyMap<string, Provider>;

  constructor(providers: readonly Provider[]) {
    this.byService = new Map(providers.map((p) => [p.service, p]));
  }

  get(service: string): Provider | undefined {
    return this.byService.get(service);
  }

  all(): Provider[] {
    return [...this.byService.values()];
  }
}

/**
 * Builds the registry from the built-in definitions and the environment. Per provider, with
 * PREFIX = the service name in upper case (`GOOGLE_CALENDAR`):
 *   PREFIX_CLIENT_ID / PREFIX_CLIENT_ID_FILE, PREFIX_CLIENT_SECRET / PREFIX_CLIENT_SECRET_FILE,
 *   PREFIX_AUTHORIZE_URL, PREFIX_TOKEN_URL, PREFIX_REVOCATION_URL ("none" removes it),
 *   PREFIX_REVOCATION_STYLE (rfc7009|github|slack), PREFIX_PROBE_URL ("none": probe by refresh),
 *   PREFIX_SCOPES (default scopes, space or comma separated), PREFIX_PKCE (true|false),
 *   PREFIX_TOKEN_AUTH (basic|post), PREFIX_AUTHORIZE_PARAMS (a query string: "a=1&b=2").
 * OAUTH_CUSTOM_PROVIDERS="crm,acme" adds providers for custom tools; each needs
 * PREFIX_AUTHORIZE_URL and PREFIX_TOKEN_URL. Throws one error naming every problem.
 */
export function loadProviders(env: NodeJS.ProcessEnv = process.env): ProviderRegistry {
  const problems: string[] = [];
  const defs: ProviderDef[] = [...BUILT_IN_PROVIDERS];
  for (const name of (env['OAUTH_CUSTOM_PROVIDERS'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!SERVICE_NAME.test(name)) {
      problems.push(`OAUTH_CUSTOM_PROVIDERS: "${name}" must match ${SERVICE_NAME.source}`);
      continue;
    }
    if (defs.some((d) => d.service === name)) {
      problems.push(`OAUTH_CUSTOM_PROVIDERS: "${name}" is a built-in service; configure it with its ${envPrefix(name)}_* variables`);
      continue;
    }
    const p = envPrefix(name);
    if (!env[`${p}_AUTHORIZE_URL`] || !env[`${p}_TOKEN_URL`])
      problems.push(`custom provider ${name}: ${p}_AUTHORIZE_URL and ${p}_TOKEN_URL are required`);
    defs.push({ service: name, displayName: name, authorizeUrl: '', tokenUrl: '', ...CUSTOM_DEFAULTS });
  }

  const providers = defs.map((def) => applyEnv(def, env, problems));
  if (problems.length > 0) throw new VaultConfigError(`invalid OAuth provider configuration:\n  - ${problems.join('\n  - ')}`);
  return new ProviderRegistry(providers);
}

function applyEnv(def: ProviderDef, env: NodeJS.ProcessEnv, problems: string[]): Provider {
  const p = envPrefix(def.service);
  const url = (name: string, fallback: string | null, nullable: boolean): string | null => {
    const v = env[`${p}_${name}`];
    if (v === undefined || v === '') return fallback;
    if (nullable && v === 'none') return null;
    if (!isHttpUrl(v.replace('{client_id}', 'x'))) problems.push(`${p}_${name} must be an http(s) URL`);
    return v;
  };
  const choice = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const v = env[`${p}_${name}`];
    if (v === undefined || v === '') return fallback;
    if (!allowed.includes(v as T)) problems.push(`${p}_${name} must be one of ${allowed.join(', ')}`);
    return v as T;
  };
  let clientId: string | undefined;
  let clientSecret: string | undefined;
  try {
    clientId = readSecret(env, `${p}_CLIENT_ID`);
    clientSecret = readSecret(env, `${p}_CLIENT_SECRET`);
  } catch (err) {
    problems.push((err as Error).message);
  }
  const scopes = env[`${p}_SCOPES`];
  const params = env[`${p}_AUTHORIZE_PARAMS`];
  return {
    ...def,
    authorizeUrl: url('AUTHORIZE_URL', def.authorizeUrl, false) ?? def.authorizeUrl,
    tokenUrl: url('TOKEN_URL', def.tokenUrl, false) ?? def.tokenUrl,
    revocationUrl: url('REVOCATION_URL', def.revocationUrl, true),
    revocationStyle: choice('REVOCATION_STYLE', ['rfc7009', 'github', 'slack'] as const, def.revocationStyle),
    probeUrl: url('PROBE_URL', def.probeUrl, true),
    defaultScopes: scopes !== undefined ? parseScopeList(scopes) : normalizeScopes(def.defaultScopes),
    pkce: choice('PKCE', ['true', 'false'] as const, def.pkce ? 'true' : 'false') === 'true',
    tokenAuth: choice('TOKEN_AUTH', ['basic', 'post'] as const, def.tokenAuth),
    authorizeParams: params !== undefined ? Object.fromEntries(new URLSearchParams(params)) : def.authorizeParams,
    clientId,
    clientSecret,
    configured: Boolean(clientId && clientSecret),
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
