import type { ProviderRegister } from '@tes/contracts';
import { normalizeScopes } from '../oauth-providers/provider-registry.js';
import { customProviderIdOf, type CustomProviderDoc } from './custom-provider.js';
import type { KeyRing } from '@tes/sealing';

/** Associated data of a sealed client secret: it only opens on its own (account, environment, service). */
export function clientSecretAad(providerId: string): string {
  return `custom_provider:${providerId}:client_secret`;
}

export function openClientSecret(doc: CustomProviderDoc, ring: KeyRing): string {
  return ring.decrypt(doc.client_secret_enc, clientSecretAad(doc._id));
}

/** A registration as stored: the defaults applied, the secret sealed under the current key. */
export function customProviderDoc(
  input: ProviderRegister,
  prev: CustomProviderDoc | null,
  ring: KeyRing,
  now = Date.now(),
): CustomProviderDoc {
  const id = customProviderIdOf(input, input.service);
  return {
    _id: id,
    account_id: input.account_id,
    environment: input.environment,
    service: input.service,
    display_name: input.display_name,
    authorize_url: input.authorize_url,
    token_url: input.token_url,
    revocation_url: input.revocation_url ?? null,
    scopes: normalizeScopes(input.scopes ?? []),
    client_id: input.client_id,
    client_secret_enc: ring.encrypt(input.client_secret, clientSecretAad(id)),
    key_id: ring.currentKid,
    pkce: input.pkce ?? true,
    token_auth: input.token_auth ?? 'post',
    created_at: prev?.created_at ?? new Date(now),
    updated_at: new Date(now),
  };
}

/** The same secret sealed again under the ring's current key. */
export function resealedProviderDoc(prev: CustomProviderDoc, ring: KeyRing, now = Date.now()): CustomProviderDoc {
  return {
    ...prev,
    client_secret_enc: ring.encrypt(openClientSecret(prev, ring), clientSecretAad(prev._id)),
    key_id: ring.currentKid,
    updated_at: new Date(now),
  };
}
