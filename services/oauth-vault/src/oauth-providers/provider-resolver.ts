import { openClientSecret } from '../domain/custom-provider-docs.js';
import type { KeyRing } from '@tes/sealing';
import type { CustomProviderDoc, CustomProviderStore, ProviderScope } from '../domain/custom-provider.js';
import { CUSTOM_DEFAULTS, type Provider, type ProviderRegistry } from './provider-registry.js';

/**
 * Which provider serves a service for an account's environment: the deployment's own
 * (built-in, or declared in OAUTH_CUSTOM_PROVIDERS) first, else the custom provider the account
 * registered for that environment (provider.register). Read from the database on every call,
 * so a re-registered client secret is used at once by every replica.
 */
export class ProviderResolver {
  constructor(
    /** The deployment's providers (built-in and env-declared). */
    readonly registry: ProviderRegistry,
    private readonly custom: CustomProviderStore,
    private readonly ring: KeyRing,
  ) {}

  /** A provider of the deployment: the same for every account, and no account may register its name. */
  isDeployed(service: string): boolean {
    return this.registry.get(service) !== undefined;
  }

  async resolve(service: string, scope: ProviderScope): Promise<Provider | undefined> {
    const deployed = this.registry.get(service);
    if (deployed) return deployed;
    const doc = await this.custom.find(scope, service);
    return doc ? customProvider(doc, this.ring) : undefined;
  }

  /** What pages call the service (no secret is opened for it). */
  async displayName(service: string, scope: ProviderScope): Promise<string> {
    const deployed = this.registry.get(service);
    if (deployed) return deployed.displayName;
    return (await this.custom.find(scope, service))?.display_name ?? service;
  }
}

/** A registered custom provider as the OAuth flow uses it (the client secret opened). */
function customProvider(doc: CustomProviderDoc, ring: KeyRing): Provider {
  return {
    ...CUSTOM_DEFAULTS,
    service: doc.service,
    displayName: doc.display_name,
    authorizeUrl: doc.authorize_url,
    tokenUrl: doc.token_url,
    revocationUrl: doc.revocation_url,
    revocationStyle: 'rfc7009',
    defaultScopes: [...doc.scopes],
    pkce: doc.pkce,
    tokenAuth: doc.token_auth,
    clientId: doc.client_id,
    clientSecret: openClientSecret(doc, ring),
    configured: true,
    registeredIn: doc.environment,
  };
}
