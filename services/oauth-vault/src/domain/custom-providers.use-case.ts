import type { ProviderDelete, ProviderRegister } from '@tes/contracts';
import { customProviderDoc } from './custom-provider-docs.js';
import type { VaultDeps } from './deps.js';

export type ProviderReply = { ok: true } | { ok: false; error: { code: 'invalid_request'; message: string } };

/**
 * provider.register: creates or replaces the OAuth client of an account's custom tool in one
 * environment, its secret sealed. A service the deployment already provides (built-in or
 * OAUTH_CUSTOM_PROVIDERS) cannot be registered: every lookup would find the deployment's first.
 */
export async function registerProvider(input: ProviderRegister, deps: VaultDeps): Promise<ProviderReply> {
  const refused = refuseDeployed(input.service, deps);
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
