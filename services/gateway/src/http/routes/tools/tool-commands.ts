import type { Environment, ToolManifest, ToolView } from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import { upstreamError } from '../../upstream.js';
import { toolReply, toolView } from './tool-manifest.js';

/** Who a tool belongs to, and how long to wait for the owning services. */
export interface ToolScope {
  accountId: string;
  environment: Environment;
  timeoutMs: number;
  correlationId?: string;
}

/**
 * Registers (creates or replaces) a custom tool. The OAuth client goes to the oauth-vault first
 * (it encrypts the secret), then the tool to the orchestrator: a tool is never plannable before
 * its provider exists. Both writes replace by name, so a retry after a failure in between converges.
 */
export async function registerTool(broker: Broker, s: ToolScope, manifest: ToolManifest): Promise<{ tool: ToolView; created: boolean }> {
  const scope = { account_id: s.accountId, environment: s.environment };
  const opts = { timeoutMs: s.timeoutMs, ...(s.correlationId ? { correlationId: s.correlationId } : {}) };
  // A tool without OAuth has no provider: one left from an earlier registration is removed.
  const reply = manifest.oauth
    ? await broker
        .request('provider.register', { ...scope, service: manifest.name, display_name: manifest.name, ...manifest.oauth }, opts)
        .catch(upstreamError)
    : await broker.request('provider.delete', { ...scope, service: manifest.name }, opts).catch(upstreamError);
  toolReply(reply);
  const registered = await broker
    .request('tool.register', { ...scope, tool: toolView(manifest) }, { ...opts, partitionKey: s.accountId })
    .catch(upstreamError);
  return toolReply<{ tool: ToolView; created: boolean }>(registered);
}

export async function listTools(broker: Broker, s: ToolScope): Promise<ToolView[]> {
  const reply = await broker
    .request('tool.list', { account_id: s.accountId, environment: s.environment }, { partitionKey: s.accountId, timeoutMs: s.timeoutMs })
    .catch(upstreamError);
  return toolReply<{ tools: ToolView[] }>(reply).tools;
}

/**
 * Deletes a custom tool (404 not_found when there is none). It leaves the orchestrator first (no
 * new task can plan it), then the vault forgets its OAuth client and the users' connections.
 * Tasks already planned with it keep their copy of its definition.
 */
export async function deleteTool(broker: Broker, s: ToolScope, name: string): Promise<void> {
  const scope = { account_id: s.accountId, environment: s.environment };
  const reply = await broker
    .request('tool.delete', { ...scope, name }, { partitionKey: s.accountId, timeoutMs: s.timeoutMs })
    .catch(upstreamError);
  toolReply(reply, name);
  toolReply(await broker.request('provider.delete', { ...scope, service: name }, { timeoutMs: s.timeoutMs }).catch(upstreamError));
}
