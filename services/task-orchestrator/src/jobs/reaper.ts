import type { Broker } from '@tes/messaging';
import type { Logger } from '@tes/logger';
import type { TaskRepository } from '../store/task.repository.js';

/** The longest wait before a task that still looks stalled is asked for again. */
const MAX_BACKOFF_MS = 300_000;

/**
 * Guarantees no task stays running forever: tasks untouched for too long, or with
 * an unsent outbox, get a task.reconcile (with the version seen) sent to their partition's
 * writer, which re-dispatches the stalled step or, past STALL_GIVE_UP_AFTER_MS, fails the
 * task. The reaper itself never writes a task (that would race the writer).
 */
export function startReaper(deps: {
  broker: Broker;
  tasks: TaskRepository;
  logger: Logger;
  stallAfterMs: number;
  intervalMs: number;
}): () => void {
  let busy = false;
  /**
   * Task id → when this reaper last asked for its reconcile, and how many times in a row.
   * A task still needing attention is asked again only after an exponential backoff
   * (stallAfterMs, 2×, 4×, … at most MAX_BACKOFF_MS): while the partitions have a backlog
   * (after a broker outage every running task looks stalled), asking again at every sweep
   * only piles duplicate reconciles (and the step re-dispatches they cause) in front of the
   * step results that would unstall the tasks. A task that no longer needs attention is
   * forgotten, so its next stall starts afresh.
   */
  const asked = new Map<string, { at: number; n: number }>();
  const timer = setInterval(() => {
    if (busy || !deps.broker.isConnected) return;
    busy = true;
    sweep()
      .catch((err: unknown) => deps.logger.warn('reaper sweep failed', { error: String(err) }))
      .finally(() => {
        busy = false;
      });
  }, deps.intervalMs);
  timer.unref();

  async function sweep(): Promise<void> {
    const now = Date.now();
    const found = await deps.tasks.findNeedingAttention(new Date(now - deps.stallAfterMs), 100 + asked.size);
    const needing = new Set(found.map((t) => t._id));
    for (const id of asked.keys()) if (!needing.has(id)) asked.delete(id);
    let sent = 0;
    for (const t of found) {
      const prev = asked.get(t._id);
      if (prev && now - prev.at < Math.min(deps.stallAfterMs * 2 ** (prev.n - 1), MAX_BACKOFF_MS)) continue;
      await deps.broker.publish(
        'task.reconcile',
        { task_id: t._id, account_id: t.account_id, reason: 'stalled', version: t.version },
        { partitionKey: t.account_id },
      );
      asked.set(t._id, { at: now, n: (prev?.n ?? 0) + 1 });
      if (++sent >= 100) break;
    }
    if (sent > 0) deps.logger.info('reaper asked for reconcile', { tasks: sent, backing_off: asked.size - sent });
  }

  return () => clearInterval(timer);
}
