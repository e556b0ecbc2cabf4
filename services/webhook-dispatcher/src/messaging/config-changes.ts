import { QUEUES, type Environment, type WebhookConfigChanged } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { Broker } from '@tes/messaging';
import type { ConfigCache } from '../domain/config-cache.js';
import type { ChangeListener } from '../store/endpoint.repository.js';

/** How long a change is offered to the broker before the replicas are left to their cache's safety net. */
const ANNOUNCE_BUDGET_MS = 30_000;

/**
 * This replica's own queue of `webhook.config_changed`: whoever changes an endpoint or a signing
 * secret (any replica, the operator CLI) has every replica drop its cached copy at once, so the
 * cache may keep entries for `followedTtlMs` instead of a second.
 */
export async function followConfigChanges(broker: Broker, cache: ConfigCache, replica: string, followedTtlMs: number): Promise<void> {
  const handle = await broker.consume(
    QUEUES.dispatcherConfigChanges(replica),
    async (d) => {
      const { account_id, environment } = d.data as WebhookConfigChanged;
      cache.invalidate(account_id, environment);
    },
    { prefetch: 64 },
  );
  cache.followChanges(() => handle.attachment()?.id, followedTtlMs);
}

export interface ConfigAnnouncer {
  /** Register with the repositories' `onChange`: announces what was stored. */
  announce: ChangeListener;
  /** Resolves when every announcement so far was published or given up (the CLI waits before it exits). */
  settled(): Promise<void>;
  /** Announcements given up so far (the broker stayed unreachable for the whole budget). */
  failed(): number;
}

/**
 * Publishes `webhook.config_changed` for every endpoint or secret stored through this process,
 * retrying while the broker is unreachable (for `budgetMs`). A change announced late or never is
 * still seen by every replica within its cache's safety net (WEBHOOK_CONFIG_CACHE_FOLLOWED_MS).
 */
export function configAnnouncer(broker: Pick<Broker, 'publish'>, logger: Logger, budgetMs = ANNOUNCE_BUDGET_MS): ConfigAnnouncer {
  const inFlight = new Set<Promise<void>>();
  let failed = 0;
  const publish = async (data: WebhookConfigChanged): Promise<void> => {
    const deadline = Date.now() + budgetMs;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        await broker.publish('webhook.config_changed', data);
        return;
      } catch (err) {
        if (Date.now() + delay > deadline) {
          failed++;
          logger.warn('could not announce a webhook configuration change; replicas see it within their cache safety net', {
            account_id: data.account_id,
            environment: data.environment,
            error: String(err),
          });
          return;
        }
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
  return {
    announce(accountId: string, environment: Environment) {
      const p = publish({ account_id: accountId, environment }).finally(() => inFlight.delete(p));
      inFlight.add(p);
    },
    async settled() {
      await Promise.all([...inFlight]);
    },
    failed: () => failed,
  };
}
