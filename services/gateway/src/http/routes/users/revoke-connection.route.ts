import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import { authOf } from '../../auth.js';
import { ask, upstreamOf, vaultOrApiError } from '../../upstream.js';
import { connectionParams } from './connection-params.js';

/**
 * DELETE /v1/users/:user_id/connections/:service → 204. The oauth-vault revokes the
 * tokens (at the provider where it can) and forgets them; unknown → 404 connection_not_found.
 */
export function revokeConnectionRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const { user_id, service } = connectionParams(req);
    const { account, environment } = authOf(res);
    const reply = await ask(upstreamOf(deps, res), 'connection.revoke', {
      account_id: account._id,
      environment,
      user_id,
      service: service ?? '',
    });
    vaultOrApiError(reply, { notFound: `User ${user_id} has no ${service ?? ''} connection` });
    res.status(204).end();
  };
}
