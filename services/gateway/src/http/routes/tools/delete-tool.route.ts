import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import { authOf } from '../../auth.js';
import { deleteTool } from './tool-commands.js';
import { toolName } from './tool-manifest.js';

/** DELETE /v1/tools/:name → 204, or 404 not_found. */
export function deleteToolRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const name = toolName(req);
    const { account, environment } = authOf(res);
    await deleteTool(deps.broker, { accountId: account._id, environment, timeoutMs: deps.timeoutMs }, name);
    res.status(204).end();
  };
}
