import type { Logger } from '@tes/logger';
import type { MessageDataMap, MessageType } from '@tes/contracts';
import type { Broker } from './broker.js';

/** How long a change is offered to the broker before the replicas are left to their cache's safety net. */
export const ANNOUNCE_BUDGET_MS = 30_000;

export interface Announcer<T extends MessageType> {
  /**
   * Publishes, retrying while the broker is unreachable (for the budget). Resolves once published
   * (confirmed by the broker) or given up; never rejects, so a caller may also leave it running.
   */
  announce(data: MessageDataMap[T]): Promise<void>;
  /** Resolves when every announcement so far was published or given up (a CLI waits before it exits). */
  settled(): Promise<void>;
  /** Announcements given up so far (the broker stayed unreachable for the whole budget). */
  failed(): number;
}

/**
 * Announces a change stored in the database (`webhook.config_changed`,
 * `gateway.credentials_changed`) to every replica that caches what changed. Each announcement is
 * retried while the broker is unreachable, for `budgetMs`; one given up is logged once, and the
 * replicas then see the change within their cache's safety net.
 */
export function changeAnnouncer<T extends MessageType>(
  broker: Pick<Broker, 'publish'>,
  type: T,
  logger: Logger,
  budgetMs = ANNOUNCE_BUDGET_MS,
): Announcer<T> {
  const inFlight = new Set<Promise<void>>();
  let failed = 0;
  const publish = async (data: MessageDataMap[T]): Promise<void> => {
    const deadline = Date.now() + budgetMs;
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        await broker.publish(type, data);
        return;
      } catch (err) {
        if (Date.now() + delay > deadline) {
          failed++;
          logger.warn(`could not announce ${type}; replicas see the change within their cache safety net`, {
            ...(data as object),
            error: String(err),
          });
          return;
        }
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  };
  return {
    announce(data) {
      const p = publish(data).finally(() => inFlight.delete(p));
      inFlight.add(p);
      return p;
    },
    async settled() {
      await Promise.all([...inFlight]);
    },
    failed: () => failed,
  };
}

/**
 * A publisher for a short-lived process (an operator CLI) that needs the broker only to announce
 * a change: it connects on the first publish, waits at most `budgetMs` for the connection, and
 * `close()` closes it only if it was opened. A publish while unreachable throws (the announcer retries).
 */
export function lazyPublisher(broker: Broker, budgetMs: number): Pick<Broker, 'publish'> & { close(): Promise<void> } {
  let connecting: Promise<boolean> | undefined;
  const connected = () =>
    (connecting ??= Promise.race([
      broker.connect().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((r) => setTimeout(() => r(false), budgetMs).unref()),
    ]));
  return {
    publish: async (type, data, opts) => {
      if (!(await connected())) throw new Error('broker unreachable');
      return broker.publish(type, data, opts);
    },
    close: async () => {
      if (connecting && (await connecting)) await broker.close(1000).catch(() => undefined);
    },
  };
}
