import type { Logger } from '@tes/logger';
import type { PartitionMemory, PublishedOutbox } from './partition-memory.js';
import type { TaskStore } from './ports.js';

/** A partition's clearing: the batch due, and the clears of ended tasks under way beside the turn (one batch at a time). */
interface Clearing {
  timer: NodeJS.Timeout | undefined;
  ended: Promise<void>;
}

/**
 * Clears, in the database, the outboxes published since the last clear that no later write has
 * replaced, in one batch per partition `delayMs` after the first publish. An unfinished task's
 * outbox is cleared in the task's lane (its next message may write the task, and FerretDB v1
 * applies an update without a lock), so a message of that task waits behind one such update at
 * most. An ended task is never written again by any writer (late messages about it write
 * nothing, a reconcile only publishes), so its outbox is cleared outside the turn, one batch per
 * partition at a time, in one command for many (TaskStore.clearOutboxes): under load a batch held
 * the partition for up to 0.6 s (bench/latency-breakdown.ts). A clear that fails or never happens costs a duplicate publish later
 * (the reaper's reconcile), nothing more.
 */
export class OutboxClearing {
  private readonly partitions = new Map<PartitionMemory, Clearing>();

  constructor(
    private readonly tasks: Pick<TaskStore, 'clearOutboxes'>,
    private readonly logger: Logger,
    private readonly delayMs: number,
  ) {}

  /** Registers a partition, so the published outboxes it holds are cleared at shutdown too. */
  remember(mem: PartitionMemory): PartitionMemory {
    this.clearing(mem);
    return mem;
  }

  /** An outbox of the partition was published: its batch clear is due in `delayMs`, unless one is due already. */
  published(mem: PartitionMemory): void {
    const c = this.clearing(mem);
    c.timer ??= setTimeout(() => void this.clearPublished(mem), this.delayMs).unref();
  }

  async clearPublished(mem: PartitionMemory): Promise<void> {
    const c = this.clearing(mem);
    clearTimeout(c.timer);
    c.timer = undefined;
    if (!mem.valid) {
      mem.forget();
      return;
    }
    const toClear = mem.publishedToClear();
    const ended = toClear.filter((p) => p.ended);
    c.ended = c.ended.then(() => this.clear(mem, ended, true));
    for (const p of toClear) {
      if (p.ended) continue;
      await mem.task(p.id, async () => {
        if (!mem.valid) return mem.forget();
        if (mem.isPublished(p.id, p.version)) await this.clear(mem, [p]);
      });
    }
    await c.ended;
  }

  /**
   * At shutdown, before the partitions are handed over: clear what was published. Waits at most
   * `timeoutMs` (a message still being handled holds its partition's turn).
   */
  async clearAll(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([...this.partitions.keys()].map((m) => this.clearPublished(m))),
      new Promise((r) => (timer = setTimeout(r, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  private async clear(mem: PartitionMemory, list: PublishedOutbox[], ended = false): Promise<void> {
    await this.tasks
      .clearOutboxes(list, { ended })
      .catch((e: unknown) => this.logger.warn('clearing published outboxes failed', { error: String(e) }));
    for (const p of list) mem.outboxCleared(p.id, p.version);
  }

  private clearing(mem: PartitionMemory): Clearing {
    let c = this.partitions.get(mem);
    if (!c) {
      c = { timer: undefined, ended: Promise.resolve() };
      this.partitions.set(mem, c);
    }
    return c;
  }
}
