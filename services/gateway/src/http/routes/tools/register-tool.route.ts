import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import { authOf } from '../../auth.js';
import { registerTool } from './tool-commands.js';
import { validManifest } from './tool-manifest.js';

/** POST /v1/tools → 201 (created) or 200 (replaced) with the tool, never its client secret. */
export function registerToolRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const manifest = validManifest(req);
    const { account, environment } = authOf(res);
    const { tool, created } = await registerTool(
      deps.broker,
      { accountId: account._id, environment, timeoutMs: deps.timeoutMs, correlationId: res.locals['requestId'] as string },
      manifest,
    );
    res.status(created ? 201 : 200).json(tool);
  };
}
