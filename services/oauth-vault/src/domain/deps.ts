import type { Logger } from '@tes/logger';
import type { OAuthClient } from '../oauth-providers/oauth-client.js';
import type { ProviderResolver } from '../oauth-providers/provider-resolver.js';
import type { KeyRing } from '@tes/sealing';
import type { Announcer } from './announcer.js';
import type { ConnectionStore } from './connection.js';
import type { Schedule } from './connection-docs.js';
import type { CustomProviderStore } from './custom-provider.js';
import type { LeaseStore } from './lease.js';
import type { PendingAuthorizationStore } from './pending-authorization.js';
import type { TokenSigner } from './signed-tokens.js';

export interface VaultSettings extends Schedule {
  /** Where browsers reach the vault's pages; the OAuth redirect URI is `<this>/oauth/callback`. */
  publicBaseUrl: string;
  stateTtlS: number;
  /** Lifetime of a pending authorization (what a waiting task's consent links stand for). */
  pendingTtlS: number;
  /** Lifetime of one consent link (the `auth_url`); it also works only once. */
  consentLinkTtlS: number;
  /** credential.get refreshes a token expiring within this (at most half the token's lifetime). */
  refreshMarginMs: number;
  /** Lifetime of write/refresh leases (LEASE_TTL_MS). */
  leaseTtlMs: number;
  /** PUBLIC_RATE_LIMIT_PER_MINUTE: requests per client address to the public pages (0: no limit; default 60). */
  publicRateLimitPerMinute?: number;
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the client address. */
  trustedProxies?: readonly string[];
}

/** Everything the use cases need; built once in composition.ts (or a test). */
export interface VaultDeps {
  /** Every provider lookup: the deployment's providers, then the account's custom ones. */
  providers: ProviderResolver;
  /** Custom tools' OAuth clients (provider.register / provider.delete). */
  customProviders: CustomProviderStore;
  connections: ConnectionStore;
  pending: PendingAuthorizationStore;
  leases: LeaseStore;
  announcer: Announcer;
  ring: KeyRing;
  signer: TokenSigner;
  oauth: OAuthClient;
  logger: Logger;
  settings: VaultSettings;
}

export function redirectUri(settings: VaultSettings): string {
  return `${settings.publicBaseUrl}/oauth/callback`;
}
