import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import { authOf } from '../../auth.js';
import { ask, upstreamOf, vaultOrApiError } from '../../upstream.js';
import { connectionParams } from './connection-params.js';

/**
 * POST /v1/users/:user_id/settings_link → 201 {url, expires_at}: the vault signs a short-lived
 * link to the end user's hosted settings page (it keeps the signing secret to itself).
 */
export function createSettingsLinkRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const { user_id } = connectionParams(req);
    const { account, environment } = authOf(res);
    const reply = await ask(upstreamOf(deps, res), 'settings_link.create', { account_id: account._id, environment, user_id });
    const { url, expires_at } = vaultOrApiError(reply);
    res.status(201).json({ url, expires_at });
  };
}
