import type http from 'node:http';
import type https from 'node:https';
import type { Environment } from '@tes/contracts';
import { OutboundPolicy, OutboundRefusedError, outboundAgents } from '@tes/outbound';

/**
 * The outbound-request policy (@tes/outbound) as the http tool and custom tools use it: every
 * address connected to is public unless allow-listed (HTTP_TOOL_ALLOW_HOSTS: host names, IPs or
 * CIDRs) or OUTBOUND_ALLOW_PRIVATE is on, checked in the socket's own DNS lookup (no DNS
 * rebinding). `httpsOnly`: a custom tool's live calls carry the user's token, so they want https;
 * the http tool fetches what the prompt names, plain http included.
 */
export interface HttpSettings {
  allowHosts: readonly string[];
  allowPrivate?: boolean;
}

export interface Outbound {
  policy: OutboundPolicy;
  http: http.Agent;
  https: https.Agent;
}

const cache = new WeakMap<HttpSettings, Map<string, Outbound>>();

/** The policy and its agents for one settings object (built once). */
export function outbound(settings: HttpSettings, httpsOnly = false): Outbound {
  let byMode = cache.get(settings);
  if (!byMode) cache.set(settings, (byMode = new Map<string, Outbound>()));
  const key = String(httpsOnly);
  let o = byMode.get(key);
  if (!o) {
    const policy = new OutboundPolicy({ httpsOnly, allowHosts: settings.allowHosts, allowPrivate: settings.allowPrivate ?? false });
    o = { policy, ...outboundAgents(policy) };
    byMode.set(key, o);
  }
  return o;
}

/** The policy of a custom tool's calls in an environment: https in live. */
export function customToolOutbound(settings: HttpSettings, environment: Environment): Outbound {
  return outbound(settings, environment === 'live');
}

/** The refusal inside an error (axios puts the lookup's error in `cause`), if that is what it is. */
export function refusalOf(err: unknown): OutboundRefusedError | undefined {
  if (err instanceof OutboundRefusedError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof OutboundRefusedError ? cause : undefined;
}

/** What a step says about a refused URL: that it is not allowed, and why from the URL or DNS alone. */
export function refusedText(url: string, err: OutboundRefusedError): string {
  return `${url}: ${err.message} (${err.reason})`;
}
