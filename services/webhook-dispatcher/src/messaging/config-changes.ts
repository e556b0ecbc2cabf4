import { QUEUES, type Environment } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { ANNOUNCE_BUDGET_MS, changeAnnouncer, type Broker } from '@tes/messaging';
import type { ConfigCache } from '../store/config-cache.js';
import type { ChangeListener } from '../store/endpoint.repository.js';

/**
 * This replica's own queue of `webhook.config_changed`: whoever changes an endpoint or a signing
 * secret (any replica, the operator CLI) has every replica drop its cached copy at once, so the
 * cache may keep entries for `followedTtlMs` instead of a second.
 */
export async function followConfigChanges(broker: Broker, cache: ConfigCache, replica: string, followedTtlMs: number): Promise<void> {
  const handle = await broker.consume(
    QUEUES.dispatcherConfigChanges(replica),
    async (d) => {
      const { account_id, environment } = d.data;
      cache.invalidate(account_id, environment);
    },
    { prefetch: 64 },
  );
  cache.followChanges(() => handle.attachment()?.id, followedTtlMs);
}

export interface ConfigAnnouncer {
  /** Register with the repositories' `onChange`: announces what was stored. */
  announce: ChangeListener;
  settled(): Promise<void>;
  failed(): number;
}

/**
 * Publishes `webhook.config_changed` for every endpoint or secret stored through this process
 * (changeAnnouncer). A change announced late or never is still seen by every replica within its
 * cache's safety net (WEBHOOK_CONFIG_CACHE_FOLLOWED_MS).
 */
export function configAnnouncer(broker: Pick<Broker, 'publish'>, logger: Logger, budgetMs = ANNOUNCE_BUDGET_MS): ConfigAnnouncer {
  const announcer = changeAnnouncer(broker, 'webhook.config_changed', logger, budgetMs);
  return {
    announce: (accountId: string, environment: Environment) => void announcer.announce({ account_id: accountId, environment }),
    settled: () => announcer.settled(),
    failed: () => announcer.failed(),
  };
}
