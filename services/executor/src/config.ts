import type { FromSchema } from 'json-schema-to-ts';
import { outboundEnv } from '@tes/outbound';
import { commonEnv } from '@tes/config';
import { PROVIDER_APIS, PROVIDER_URL_VARIABLES, perProvider, type ProviderUrlVariable } from './tools/provider-apis.js';
import { DEFAULT_SETTINGS, type EngineSettings } from './tools/tool.js';

const url = (def: string) => ({ type: 'string', pattern: '^https?://', default: def }) as const;
const ms = (def: number, minimum = 0) => ({ type: 'integer', minimum, default: def }) as const;
const d = DEFAULT_SETTINGS;

const baseSchema = {
  type: 'object',
  properties: {
    ...commonEnv,
    OPS_PORT: { ...commonEnv.OPS_PORT, default: 8091 },
    MONGO_DB: { type: 'string', minLength: 1, default: 'tes_executor' },
    AMQP_NAMESPACE: { type: 'string', default: '' },
    PREFETCH: { type: 'integer', minimum: 1, maximum: 1000, default: 32 },
    PROVIDER_MAX_ATTEMPTS: { type: 'integer', minimum: 1, maximum: 10, default: d.maxAttempts },
    PROVIDER_BACKOFF_MS: ms(d.backoffMs),
    PROVIDER_BACKOFF_MAX_MS: ms(d.backoffMaxMs),
    PROVIDER_RETRY_AFTER_MAX_MS: ms(d.retryAfterMaxMs),
    PROVIDER_TIMEOUT_MS: ms(d.requestTimeoutMs, 100),
    VAULT_TIMEOUT_MS: ms(d.vaultTimeoutMs, 100),
    /** Test keys skip the sandbox consent (suites that are not about consent); off: a test-key task waits like live. */
    SANDBOX_AUTO_CONNECT: { type: 'boolean', default: d.sandboxAutoConnect },
    /** Hosts, IPs or CIDRs the http tool may reach even though they are private (comma-separated). */
    HTTP_TOOL_ALLOW_HOSTS: { type: 'string', default: '' },
    ...outboundEnv,
    HTTP_TOOL_MAX_BYTES: { type: 'integer', minimum: 1024, default: d.http.maxBytes },
    HTTP_TOOL_TIMEOUT_MS: ms(d.http.timeoutMs, 100),
  },
  required: [
    'AMQP_URL',
    'MONGO_URL',
    'OPS_PORT',
    'MONGO_DB',
    'MONGO_MAX_POOL_SIZE',
    'AMQP_NAMESPACE',
    'PREFETCH',
    'LOG_LEVEL',
    'SHUTDOWN_TIMEOUT_MS',
    'AMQP_HEARTBEAT_S',
    'PROVIDER_MAX_ATTEMPTS',
    'PROVIDER_BACKOFF_MS',
    'PROVIDER_BACKOFF_MAX_MS',
    'PROVIDER_RETRY_AFTER_MAX_MS',
    'PROVIDER_TIMEOUT_MS',
    'VAULT_TIMEOUT_MS',
    'SANDBOX_AUTO_CONNECT',
    'HTTP_TOOL_ALLOW_HOSTS',
    'OUTBOUND_ALLOW_PRIVATE',
    'HTTP_TOOL_MAX_BYTES',
    'HTTP_TOOL_TIMEOUT_MS',
  ],
} as const;

/** Each live tool's base URL variable (declared in tools/<tool>/api.ts), with its default. */
const providerUrlProperties = Object.fromEntries(
  Object.values(PROVIDER_APIS).map((api) => [api.urlVariable, url(api.defaultUrl)]),
) as Record<ProviderUrlVariable, ReturnType<typeof url>>;

export const configSchema = {
  ...baseSchema,
  properties: { ...baseSchema.properties, ...providerUrlProperties },
  required: [...baseSchema.required, ...PROVIDER_URL_VARIABLES],
};

export type Config = FromSchema<typeof baseSchema> & Record<ProviderUrlVariable, string>;

export function settingsOf(c: Config): EngineSettings {
  const trim = (u: string) => u.replace(/\/+$/, '');
  return {
    providerUrls: perProvider((api) => trim(c[api.urlVariable])),
    maxAttempts: c.PROVIDER_MAX_ATTEMPTS,
    backoffMs: c.PROVIDER_BACKOFF_MS,
    backoffMaxMs: c.PROVIDER_BACKOFF_MAX_MS,
    retryAfterMaxMs: c.PROVIDER_RETRY_AFTER_MAX_MS,
    requestTimeoutMs: c.PROVIDER_TIMEOUT_MS,
    vaultTimeoutMs: c.VAULT_TIMEOUT_MS,
    sandboxAutoConnect: c.SANDBOX_AUTO_CONNECT,
    http: {
      allowHosts: c.HTTP_TOOL_ALLOW_HOSTS.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      allowPrivate: c.OUTBOUND_ALLOW_PRIVATE,
      maxBytes: c.HTTP_TOOL_MAX_BYTES,
      timeoutMs: c.HTTP_TOOL_TIMEOUT_MS,
    },
  };
}
