import type { Environment } from '@tes/contracts';
import { OutboundPolicy, type Resolver } from '@tes/outbound';

/**
 * Where a webhook may go: the outbound-request policy of @tes/outbound (docs/webhooks.md),
 * checked when an endpoint is set and again at every delivery, on the addresses the connection
 * actually uses. Live endpoints: https only. Both environments: every address public, unless the
 * host is in WEBHOOK_ALLOWED_HOSTS or OUTBOUND_ALLOW_PRIVATE (local development) is on; test
 * endpoints are no exception (a test endpoint on a private address would scan internal ports).
 */
export interface GuardOptions {
  /** Lower-case host names, IPs or CIDRs exempt from the address check (WEBHOOK_ALLOWED_HOSTS). */
  allowedHosts: ReadonlySet<string>;
  /** OUTBOUND_ALLOW_PRIVATE. */
  allowPrivate?: boolean;
  /** Tests only: the DNS. */
  resolver?: Resolver;
}

const policies = new WeakMap<GuardOptions, Record<Environment, OutboundPolicy>>();

/** The policy of one environment's endpoints (one pair per options object). */
export function policyFor(environment: Environment, options: GuardOptions): OutboundPolicy {
  let pair = policies.get(options);
  if (!pair) {
    const base = { allowHosts: [...options.allowedHosts], allowPrivate: options.allowPrivate ?? false };
    pair = {
      live: new OutboundPolicy({ ...base, httpsOnly: true }, options.resolver),
      test: new OutboundPolicy({ ...base, httpsOnly: false }, options.resolver),
    };
    policies.set(options, pair);
  }
  return pair[environment];
}
