import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import { authOf } from '../../auth.js';
import { ask, upstreamOf, vaultOrApiError } from '../../upstream.js';
import { connectionParams } from './connection-params.js';

/**
 * GET /v1/users/:user_id/connections → {data: [{service, scopes, status, connected_at}], has_more: false}.
 * Asked of the oauth-vault, which owns connections. Only the four public fields are
 * copied, so nothing else the vault might hold (never a token) can reach the caller.
 */
export function listConnectionsRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const { user_id } = connectionParams(req);
    const { account, environment } = authOf(res);
    const reply = await ask(upstreamOf(deps, res), 'connections.list', { account_id: account._id, environment, user_id });
    const { connections } = vaultOrApiError(reply);
    const data = connections.map((c) => ({ service: c.service, scopes: c.scopes, status: c.status, connected_at: c.connected_at }));
    res.json({ data, has_more: false });
  };
}
