import type { RequestHandler } from 'express';
import { AppError } from '@tes/errors';
import type { Broker } from '@tes/messaging';
import { listTools, toolScope } from './tool-commands.js';
import { toolName } from './tool-manifest.js';

/** GET /v1/tools → {data: [tool], has_more: false}: the custom tools of the key's environment, by name. */
export function listToolsRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (_req, res) => {
    res.json({ data: await listTools(deps.broker, toolScope(deps, res)), has_more: false });
  };
}

/** GET /v1/tools/:name → the tool, or 404 not_found. */
export function getToolRoute(deps: { broker: Broker; timeoutMs: number }): RequestHandler {
  return async (req, res) => {
    const name = toolName(req);
    const tool = (await listTools(deps.broker, toolScope(deps, res))).find((t) => t.name === name);
    if (!tool) throw new AppError('not_found', `No tool ${name}`);
    res.json(tool);
  };
}
