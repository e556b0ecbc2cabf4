import { QUEUES } from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import { renewConsentLink } from '../domain/consent-link.use-case.js';
import { deleteProvider, registerProvider } from '../domain/custom-providers.use-case.js';
import type { VaultDeps } from '../domain/deps.js';
import { getCredential } from '../domain/get-credential.use-case.js';
import { listConnections, revokeConnection } from '../domain/revoke-connection.use-case.js';

/**
 * The vault's request/reply queue (validated by the broker against the catalog):
 *  - credential.get → {status: ok|authorization_required|expired|error, ...} (the only reply with a token);
 *  - connections.list → {ok: true, connections: [...]} (never a token);
 *  - connection.revoke → {ok: true} | {ok: false, error: {code: 'connection_not_found', message}};
 *  - provider.register (a custom tool's OAuth client; the secret is sealed, never echoed or logged)
 *    → {ok: true} | {ok: false, error: {code: 'invalid_request', message}} for a deployment's service name;
 *  - consent_link.renew → {ok: true, auth_url, expires_at} (a fresh consent link for a waiting task's)
 *    | {ok: false, error: {code: 'not_found', message}} when its authorization is no longer pending;
 *  - provider.delete → {ok: true} (idempotent; the provider's connections go with it) | invalid_request as above.
 * A failure answers with an error instead of leaving the requester to time out.
 */
export async function consumeVaultRequests(broker: Broker, deps: VaultDeps, prefetch: number, settingsLinkTtlS = 3600): Promise<void> {
  await broker.consume(
    QUEUES.vaultRequests,
    async (d) => {
      // The requester's correlation id (the API request id, or the step's) is on every line; tokens never are (the logger redacts).
      const log = deps.logger.child({ type: d.type, message_id: d.envelope.id, correlation_id: d.envelope.correlation_id });
      const data: { account_id: string; service?: string; task_id?: string } = d.data;
      log.debug('vault request', { service: data.service, task_id: data.task_id, account_id: data.account_id });
      const scoped: VaultDeps = { ...deps, logger: log }; // the use cases' own lines carry it too
      try {
        switch (d.type) {
          case 'credential.get':
            return await d.reply(await getCredential(d.data, scoped));
          case 'connections.list':
            return await d.reply({ ok: true, connections: await listConnections(d.data, scoped) });
          case 'connection.revoke': {
            const r = await revokeConnection(d.data, scoped);
            return await d.reply(r.ok ? { ok: true } : r);
          }
          case 'settings_link.create': {
            const q = d.data;
            const ttl = q.ttl_seconds ?? settingsLinkTtlS;
            const { token, expiresAt } = deps.signer.signSettings({ acct: q.account_id, env: q.environment, usr: q.user_id }, ttl);
            const url = `${deps.settings.publicBaseUrl}/settings?token=${encodeURIComponent(token)}`;
            return await d.reply({ ok: true, url, expires_at: expiresAt.toISOString() });
          }
          case 'consent_link.renew':
            return await d.reply(await renewConsentLink(d.data, scoped));
          case 'provider.register':
            return await d.reply(await registerProvider(d.data, scoped));
          case 'provider.delete':
            return await d.reply(await deleteProvider(d.data, scoped));
          default:
            return undefined;
        }
      } catch (err) {
        log.error('vault request failed', { error: err instanceof Error ? err.message : String(err) });
        const message = 'The OAuth vault could not answer; retry later';
        return d.type === 'credential.get'
          ? d.reply({ status: 'error', message })
          : d.reply({ ok: false, error: { code: 'temporarily_unavailable', message } });
      }
    },
    { prefetch },
  );
}
