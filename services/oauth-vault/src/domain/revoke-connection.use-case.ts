import type { ConnectionView } from '@tes/contracts';
import type { Provider } from '../oauth-providers/provider-registry.js';
import { connectionIdOf, type ConnectionDoc, type ConnectionKey } from './connection.js';
import { openAccessToken, openRefreshToken, revokedDoc } from './connection-docs.js';
import type { VaultDeps } from './deps.js';
import { pickKey } from './request-authorization.use-case.js';
import { SANDBOX_TOKEN_TYPE } from './sandbox-consent.use-case.js';

export type RevokeResult =
  { ok: true; provider_revoked: boolean } | { ok: false; error: { code: 'connection_not_found'; message: string } };

/**
 * Revokes a user's connection: the provider's revocation endpoint is called where there is one
 * (a failure there is logged; the tokens are deleted here all the same, as the user asked), the
 * sealed tokens are removed, the connection shows `revoked`, and connection.changed revoked is
 * announced. A later task needing the service asks for consent again.
 */
export async function revokeConnection(input: ConnectionKey, deps: VaultDeps): Promise<RevokeResult> {
  const key = pickKey(input);
  const id = connectionIdOf(key);
  const notFound = {
    ok: false as const,
    error: { code: 'connection_not_found' as const, message: `User ${key.user_id} has no ${key.service} connection` },
  };
  const current = await deps.connections.find(id);
  if (!current || current.status === 'revoked') return notFound;

  const provider = await deps.providers.resolve(key.service, key);
  const log = deps.logger.child({ connection_id: id, service: key.service, account_id: key.account_id });
  const event = await deps.announcer.prepare({ ...key, outcome: 'revoked', scopes: current.scopes }, id);
  let providerRevoked = false;
  const result = await deps.connections.mutate(id, 'revoke', {
    needed: (d) => d !== null && d.status !== 'revoked',
    apply: async (d) => {
      if (!d) return null;
      if (provider?.configured && d.status === 'connected' && d.token_type !== SANDBOX_TOKEN_TYPE)
        providerRevoked = await revokeAtProvider(provider, d, deps, log);
      return revokedDoc(d, event._id);
    },
  });
  if (!result.changed) return result.doc?.status === 'revoked' ? { ok: true, provider_revoked: false } : notFound;
  await deps.announcer.send(event);
  log.info('connection revoked', { provider_revoked: providerRevoked });
  return { ok: true, provider_revoked: providerRevoked };
}

async function revokeAtProvider(provider: Provider, d: ConnectionDoc, deps: VaultDeps, log: VaultDeps['logger']): Promise<boolean> {
  try {
    let accessToken: string | undefined;
    let refreshToken: string | undefined;
    try {
      accessToken = d.access_token_enc ? openAccessToken(d, deps.ring) : undefined;
      refreshToken = openRefreshToken(d, deps.ring);
    } catch (err) {
      log.warn('tokens could not be decrypted for revocation', { error: String(err) });
      return false;
    }
    return await deps.oauth.revoke(provider, { accessToken, refreshToken });
  } catch (err) {
    log.warn('revocation at the provider failed; tokens deleted here anyway', { error: String(err) });
    return false;
  }
}

/** A user's connections as the public API shows them: never a token. */
export async function listConnections(
  input: { account_id: string; environment: ConnectionKey['environment']; user_id: string },
  deps: VaultDeps,
): Promise<ConnectionView[]> {
  const docs = await deps.connections.listFor(input.account_id, input.environment, input.user_id);
  return docs.map(toView);
}

export function toView(d: ConnectionDoc): ConnectionView {
  return { service: d.service, scopes: [...d.scopes], status: d.status, connected_at: d.authorized_at.toISOString() };
}
