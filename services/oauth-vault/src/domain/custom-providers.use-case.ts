import type { ProviderDelete, ProviderRegister } from '@tes/contracts';
import { OutboundRefusedError, type OutboundPolicy } from '@tes/outbound';
import { customProviderDoc } from './custom-provider-docs.js';
import type { VaultDeps } from './deps.js';

export type ProviderReply = { ok: true } | { ok: false; error: { code: 'invalid_request'; message: string } };

/**
 * provider.register: creates or replaces the OAuth client of an account's custom tool in one
 * environment, its secret sealed. A service the deployment already provides (built-in or
 * OAUTH_CUSTOM_PROVIDERS) cannot be registered: every lookup would find the deployment's first.
 */
export async function registerProvider(input: ProviderRegister, deps: VaultDeps): Promise<ProviderReply> {
  const refused = refuseDeployed(input.service, deps) ?? (await refuseUrls(input, deps));
  if (refused) return refused;
  const prev = await deps.customProviders.find(input, input.service);
  await deps.customProviders.save(customProviderDoc(input, prev, deps.ring));
  deps.logger.info(prev ? 'custom provider replaced' : 'custom provider registered', {
    account_id: input.account_id,
    environment: input.environment,
    service: input.service,
  });
  return { ok: true };
}

/**
 * provider.delete: forgets an account's custom provider in one environment, with every
 * connection and pending authorization to it, locally (the provider is not called: its client
 * is going away). Idempotent. Consents still in flight fail at the callback (no provider).
 */
export async function deleteProvider(input: ProviderDelete, deps: VaultDeps): Promise<ProviderReply> {
  const refused = refuseDeployed(input.service, deps);
  if (refused) return refused;
  // The provider first: from now on no consent starts or completes, no token is refreshed.
  const existed = await deps.customProviders.delete(input, input.service);
  const connections = await deps.connections.deleteForService(input.account_id, input.environment, input.service);
  const pending = await deps.pending.deleteForService(input.account_id, input.environment, input.service);
  deps.logger.info('custom provider deleted', {
    account_id: input.account_id,
    environment: input.environment,
    service: input.service,
    existed,
    connections_deleted: connections,
    pending_deleted: pending,
  });
  return { ok: true };
}

/**
 * The vault calls token_url and revocation_url with the client secret and the user's tokens, and
 * sends browsers to authorize_url: each must pass the outbound policy (https in live, https for
 * authorize_url everywhere, a public host) now, and the first two again at every call.
 */
async function refuseUrls(input: ProviderRegister, deps: VaultDeps): Promise<ProviderReply | undefined> {
  const checks: [string, string | undefined, OutboundPolicy][] = [
    ['authorize_url', input.authorize_url, deps.oauth.authorizePolicy],
    ['token_url', input.token_url, deps.oauth.policyFor(input.environment)],
    ['revocation_url', input.revocation_url, deps.oauth.policyFor(input.environment)],
  ];
  for (const [field, url, policy] of checks) {
    if (url === undefined) continue;
    try {
      await policy.checkDestination(url);
    } catch (err) {
      if (!(err instanceof OutboundRefusedError)) throw err;
      return { ok: false, error: { code: 'invalid_request', message: `oauth.${field} refused: ${err.reason}` } };
    }
  }
  return undefined;
}

function refuseDeployed(service: string, deps: VaultDeps): ProviderReply | undefined {
  if (!deps.providers.isDeployed(service)) return undefined;
  return {
    ok: false,
    error: {
      code: 'invalid_request',
      message: `${service} is a provider of this deployment; a custom tool's OAuth service needs another name`,
    },
  };
}
