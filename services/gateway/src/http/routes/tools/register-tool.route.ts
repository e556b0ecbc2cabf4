import type { RequestHandler } from 'express';
import type { Broker } from '@tes/messaging';
import { registerTool, toolScope } from './tool-commands.js';
import { validManifest } from './tool-manifest.js';

/** POST /v1/tools → 201 (created) or 200 (replaced) with the tool, never its client secret. */
export function registerToolRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const manifest = validManifest(req);
    const { tool, created } = await registerTool(deps.broker, toolScope(deps, res), manifest);
    res.status(created ? 201 : 200).json(tool);
  };
}
