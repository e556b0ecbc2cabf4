import type { FromSchema } from 'json-schema-to-ts';
import { commonEnv } from '@tes/config';
import { outboundEnv } from '@tes/outbound';

/**
 * The vault's environment. Provider settings (`<SERVICE>_CLIENT_ID`, `<SERVICE>_TOKEN_URL`, ...)
 * have names made of the provider's: patternProperties, interpreted by `oauth-providers/provider-registry.ts`;
 * secrets (`VAULT_KEYS`, `VAULT_STATE_SECRET`, or their `_FILE` forms) by `domain/secrets.ts`.
 */
export const configSchema = {
  type: 'object',
  properties: {
    ...commonEnv,
    OPS_PORT: { ...commonEnv.OPS_PORT, default: 8092 },
    /** Public pages: OAuth start/callback and the end-user settings page. */
    PUBLIC_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8093 },
    HOST: { type: 'string', default: '127.0.0.1' },
    /** How browsers reach the public pages (the OAuth redirect URI is `<this>/oauth/callback`). Default http://127.0.0.1:PUBLIC_PORT. */
    PUBLIC_BASE_URL: { type: 'string', pattern: '^https?://[^\\s]+$' },
    MONGO_DB: { type: 'string', minLength: 1, default: 'tes_oauth_vault' },
    AMQP_NAMESPACE: { type: 'string', default: '' },
    /** `production` makes VAULT_KEYS and VAULT_STATE_SECRET mandatory (no ephemeral dev secrets). */
    NODE_ENV: { type: 'string', default: 'development' },
    /** Lifetime of the signed OAuth `state` (the consent must finish within it). */
    STATE_TTL_S: { type: 'integer', minimum: 30, maximum: 3600, default: 600 },
    /** Lifetime of a pending authorization: how long a waiting task's consent can still be given (each read of the task gets a fresh link to it). */
    PENDING_AUTH_TTL_S: { type: 'integer', minimum: 60, default: 604800 },
    /** Lifetime of one consent link (the `auth_url`, single-use): 15 minutes by default. */
    CONSENT_LINK_TTL_S: { type: 'integer', minimum: 1, maximum: 86400, default: 900 },
    /** credential.get refreshes a token that expires within this many seconds. */
    REFRESH_MARGIN_S: { type: 'integer', minimum: 0, default: 60 },
    /** The background sweep refreshes tokens this long before they expire. */
    REFRESH_AHEAD_S: { type: 'integer', minimum: 0, default: 300 },
    /** How often the background sweep (refresh, health probes, outbox, cleanup) runs. */
    SWEEP_INTERVAL_MS: { type: 'integer', minimum: 10, default: 5000 },
    /** Seconds between two health probes of one connection; 0 disables probes. */
    PROBE_INTERVAL_S: { type: 'integer', minimum: 0, default: 3600 },
    /** A refresh/write lease older than this is taken as abandoned (its holder died). */
    LEASE_TTL_MS: { type: 'integer', minimum: 1000, default: 30000 },
    /** Timeout of every call to a provider (token, revocation, probe). */
    PROVIDER_TIMEOUT_MS: { type: 'integer', minimum: 100, default: 10000 },
    ...outboundEnv,
    /** Default lifetime of a settings-page link made by the CLI. */
    SETTINGS_LINK_TTL_S: { type: 'integer', minimum: 60, default: 3600 },
    PREFETCH: { type: 'integer', minimum: 1, maximum: 1000, default: 32 },
    /** Requests per minute per client address to the public pages (429 above); 0 turns the limit off. */
    PUBLIC_RATE_LIMIT_PER_MINUTE: { type: 'integer', minimum: 0, default: 60 },
    /** Comma-separated proxy addresses (or CIDRs) whose X-Forwarded-For names the client address. */
    TRUSTED_PROXIES: { type: 'string', default: '' },
    /** The key ring sealing tokens at rest, `kid1:base64key,...` (or VAULT_KEYS_FILE); required in production. */
    VAULT_KEYS: { type: 'string' },
    VAULT_KEYS_FILE: { type: 'string' },
    /** Signs the OAuth `state` and the consent links (or VAULT_STATE_SECRET_FILE); required in production. */
    VAULT_STATE_SECRET: { type: 'string' },
    VAULT_STATE_SECRET_FILE: { type: 'string' },
    /** Providers for custom tools, comma separated (`crm,acme`); each needs its PREFIX_AUTHORIZE_URL and PREFIX_TOKEN_URL. */
    OAUTH_CUSTOM_PROVIDERS: { type: 'string' },
  },
  patternProperties: {
    /** PREFIX (the provider's service name in upper case) _CLIENT_ID, _CLIENT_SECRET (or their _FILE forms) and the overrides. */
    '^[A-Z][A-Z0-9_]*_((CLIENT_ID|CLIENT_SECRET)(_FILE)?|AUTHORIZE_URL|TOKEN_URL|REVOCATION_URL|REVOCATION_STYLE|PROBE_URL|SCOPES|PKCE|TOKEN_AUTH|AUTHORIZE_PARAMS)$':
      { type: 'string' },
  },
  required: [
    'AMQP_URL',
    'MONGO_URL',
    'OPS_PORT',
    'PUBLIC_PORT',
    'HOST',
    'MONGO_DB',
    'MONGO_MAX_POOL_SIZE',
    'AMQP_NAMESPACE',
    'LOG_LEVEL',
    'SHUTDOWN_TIMEOUT_MS',
    'AMQP_HEARTBEAT_S',
    'NODE_ENV',
    'STATE_TTL_S',
    'PENDING_AUTH_TTL_S',
    'CONSENT_LINK_TTL_S',
    'REFRESH_MARGIN_S',
    'REFRESH_AHEAD_S',
    'SWEEP_INTERVAL_MS',
    'PROBE_INTERVAL_S',
    'LEASE_TTL_MS',
    'PROVIDER_TIMEOUT_MS',
    'OUTBOUND_ALLOW_PRIVATE',
    'SETTINGS_LINK_TTL_S',
    'PREFETCH',
    'PUBLIC_RATE_LIMIT_PER_MINUTE',
    'TRUSTED_PROXIES',
  ],
} as const;

export type Config = FromSchema<typeof configSchema>;

/**
 * The settings read by name at run time (secrets, `<PREFIX>_CLIENT_ID`, ...), in the shape of
 * process.env that `readSecret` and `loadProviders` look them up in.
 */
export function secretsAndProviders(config: Readonly<Record<string, unknown>>): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(config).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** The public base URL without a trailing slash. */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'PUBLIC_PORT'>): string {
  return (config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PUBLIC_PORT}`).replace(/\/+$/, '');
}

/** What the CLI needs. */
export const cliConfigSchema = {
  type: 'object',
  properties: {
    MONGO_URL: commonEnv.MONGO_URL,
    MONGO_DB: configSchema.properties.MONGO_DB,
    PUBLIC_PORT: configSchema.properties.PUBLIC_PORT,
    PUBLIC_BASE_URL: configSchema.properties.PUBLIC_BASE_URL,
    SETTINGS_LINK_TTL_S: configSchema.properties.SETTINGS_LINK_TTL_S,
    LEASE_TTL_MS: configSchema.properties.LEASE_TTL_MS,
    VAULT_KEYS: configSchema.properties.VAULT_KEYS,
    VAULT_KEYS_FILE: configSchema.properties.VAULT_KEYS_FILE,
    VAULT_STATE_SECRET: configSchema.properties.VAULT_STATE_SECRET,
    VAULT_STATE_SECRET_FILE: configSchema.properties.VAULT_STATE_SECRET_FILE,
  },
  required: ['MONGO_URL', 'MONGO_DB', 'PUBLIC_PORT', 'SETTINGS_LINK_TTL_S', 'LEASE_TTL_MS'],
} as const;

export type CliConfig = FromSchema<typeof cliConfigSchema>;
