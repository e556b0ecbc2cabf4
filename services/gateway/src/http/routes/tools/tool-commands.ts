import type { Response } from 'express';
import type { Environment, ToolManifest, ToolView } from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import { authOf } from '../../auth.js';
import { ask, upstreamOf, type Upstream } from '../../upstream.js';
import { toolOrApiError, toolView } from './tool-manifest.js';

/** Who a tool belongs to, how long to wait for the owning services, and the correlation id of the asking request. */
export interface ToolScope {
  accountId: string;
  environment: Environment;
  timeoutMs: number;
  correlationId?: string;
}

/** The scope of an API request: its key's account and environment, its request id as the correlation id. */
export function toolScope(deps: { broker: Broker; timeoutMs: number }, res: Response): ToolScope {
  const { account, environment } = authOf(res);
  const { timeoutMs, correlationId } = upstreamOf(deps, res);
  return { accountId: account._id, environment, timeoutMs, ...(correlationId ? { correlationId } : {}) };
}

function upstream(broker: Broker, s: ToolScope): Upstream {
  return { broker, timeoutMs: s.timeoutMs, ...(s.correlationId ? { correlationId: s.correlationId } : {}) };
}

/**
 * Registers (creates or replaces) a custom tool. The OAuth client goes to the oauth-vault first
 * (it encrypts the secret), then the tool to the orchestrator: a tool is never plannable before
 * its provider exists. Both writes replace by name, so a retry after a failure in between converges.
 */
export async function registerTool(broker: Broker, s: ToolScope, manifest: ToolManifest): Promise<{ tool: ToolView; created: boolean }> {
  const scope = { account_id: s.accountId, environment: s.environment };
  const u = upstream(broker, s);
  // A tool without OAuth has no provider: one left from an earlier registration is removed.
  const reply = manifest.oauth
    ? await ask(u, 'provider.register', { ...scope, service: manifest.name, display_name: manifest.name, ...manifest.oauth })
    : await ask(u, 'provider.delete', { ...scope, service: manifest.name });
  toolOrApiError(reply);
  const registered = await ask(u, 'tool.register', { ...scope, tool: toolView(manifest) }, s.accountId);
  const { tool, created } = toolOrApiError(registered);
  return { tool, created };
}

export async function listTools(broker: Broker, s: ToolScope): Promise<ToolView[]> {
  const reply = await ask(upstream(broker, s), 'tool.list', { account_id: s.accountId, environment: s.environment }, s.accountId);
  return toolOrApiError(reply).tools;
}

/**
 * Deletes a custom tool (404 not_found when there is none). It leaves the orchestrator first (no
 * new task can plan it), then the vault forgets its OAuth client and the users' connections.
 * Tasks already planned with it keep their copy of its definition.
 */
export async function deleteTool(broker: Broker, s: ToolScope, name: string): Promise<void> {
  const scope = { account_id: s.accountId, environment: s.environment };
  const u = upstream(broker, s);
  toolOrApiError(await ask(u, 'tool.delete', { ...scope, name }, s.accountId), name);
  toolOrApiError(await ask(u, 'provider.delete', { ...scope, service: name }));
}
