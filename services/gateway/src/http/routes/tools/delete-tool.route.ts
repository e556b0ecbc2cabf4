import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import { deleteTool, toolScope } from './tool-commands.js';
import { toolName } from './tool-manifest.js';

/** DELETE /v1/tools/:name → 204, or 404 not_found. */
export function deleteToolRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const name = toolName(req);
    await deleteTool(deps.broker, toolScope(deps, res), name);
    res.status(204).end();
  };
}
