import type { ConnectionDoc } from './connection.js';
import { ProviderCallError } from '../oauth-providers/oauth-client.js';
import { brokenDoc, openRefreshToken, refreshedDoc } from './connection-docs.js';
import type { VaultDeps } from './deps.js';

/**
 * Refreshes the connection as it was seen (`seen`), at most once per generation across every
 * replica: the lease on the next generation is an insert only one caller wins; the others wait
 * for the new generation and take its token. A refused refresh (invalid_grant and the like)
 * marks the connection broken; a transient failure (network, 5xx) throws ProviderCallError and
 * changes nothing.
 */
export async function refreshConnection(seen: ConnectionDoc, deps: VaultDeps, trigger: string): Promise<ConnectionDoc> {
  const { connections, providers, oauth, ring, settings, logger } = deps;
  const provider = await providers.resolve(seen.service, seen);
  if (!provider?.configured) throw new ProviderCallError(false, 'not_configured', `OAuth for ${seen.service} is not configured`);
  const log = logger.child({ connection_id: seen._id, service: seen.service, account_id: seen.account_id });
  const result = await connections.mutate(seen._id, 'refresh', {
    needed: (d) => d !== null && d.status === 'connected' && d.generation === seen.generation && d.refresh_token_enc !== null,
    apply: async (d) => {
      if (!d) return null;
      const refreshToken = openRefreshToken(d, ring);
      if (!refreshToken) return null;
      try {
        const tokens = await oauth.refresh(provider, refreshToken);
        log.info('token refreshed', { trigger, rotated: tokens.refreshToken !== undefined, expires_in: tokens.expiresIn });
        return refreshedDoc(d, tokens, ring, settings);
      } catch (err) {
        if (err instanceof ProviderCallError && err.permanent) {
          log.warn('refresh refused by the provider: connection broken', { trigger, error_code: err.code });
          return brokenDoc(d, `refresh_failed:${err.code}`);
        }
        log.warn('refresh failed, will retry', { trigger, error: String(err) });
        throw err;
      }
    },
  });
  return result.doc ?? seen;
}

/** Marks the connection broken, unless it changed since it was seen (someone re-authorized or refreshed). */
export async function markBroken(seen: ConnectionDoc, deps: VaultDeps, reason: string): Promise<ConnectionDoc> {
  const result = await deps.connections.mutate(seen._id, 'broken', {
    needed: (d) => d !== null && d.status === 'connected' && d.generation === seen.generation,
    apply: async (d) => (d ? brokenDoc(d, reason) : null),
  });
  if (result.changed) deps.logger.warn('connection broken', { connection_id: seen._id, service: seen.service, reason });
  return result.doc ?? seen;
}
