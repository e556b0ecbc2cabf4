import type { TaskStatus } from '@tes/contracts';
import { setBounded } from './bounded-map.js';
import type { TaskStore } from './ports.js';
import type { ActiveCounts, Task } from './task.js';

/** Accounts whose counts a partition keeps; beyond that the oldest is forgotten (and read again when needed). */
const MAX_ACCOUNTS = 2048;

/**
 * The running and pending counts of a partition's accounts, as its active writer knows them (kept
 * in the PartitionMemory): followed through every status change the writer stores, read again
 * from the database when it is not sure.
 */
export class AdmissionCounts {
  private readonly counts = new Map<string, ActiveCounts>();

  get(accountId: string): ActiveCounts | undefined {
    return this.counts.get(accountId);
  }

  set(accountId: string, counts: ActiveCounts): void {
    setBounded(this.counts, accountId, { ...counts }, MAX_ACCOUNTS);
  }

  /** A stored task of the account went from `from` (undefined: it is new) to `to`. */
  moved(accountId: string, from: TaskStatus | undefined, to: TaskStatus): void {
    const c = this.counts.get(accountId);
    if (!c || from === to) return;
    if (from === 'running') c.running--;
    if (from === 'pending') c.pending--;
    if (to === 'running') c.running++;
    if (to === 'pending') c.pending++;
    if (c.running < 0 || c.pending < 0) this.counts.delete(accountId); // cannot happen; read again rather than trust it
  }

  /** Not sure how a write changed the account's counts: read them again next time. */
  unsureOf(accountId: string): void {
    this.counts.delete(accountId);
  }

  clear(): void {
    this.counts.clear();
  }
}

/**
 * Admission: an account runs at most its concurrency limit of tasks at once (a task waiting for a
 * user's consent holds no slot); the others are pending and start oldest first (FIFO) as slots free up.
 */
export class Admission {
  constructor(private readonly tasks: Pick<TaskStore, 'countActive' | 'oldestPending'>) {}

  /** The account's counts: as the partition knows them, else one aggregate (then remembered). */
  async counts(known: AdmissionCounts, accountId: string): Promise<ActiveCounts> {
    const counts = known.get(accountId);
    if (counts) return counts;
    const read = await this.tasks.countActive(accountId);
    known.set(accountId, read);
    return read;
  }

  /** Whether a new task of the account runs at once (else it is pending). */
  async admitsNew(known: AdmissionCounts, accountId: string, concurrencyLimit: number): Promise<boolean> {
    const { running } = await this.counts(known, accountId);
    return running < concurrencyLimit;
  }

  /** The account's oldest pending task if a slot is free for it; undefined when none waits or no slot is free. */
  async next(known: AdmissionCounts, accountId: string): Promise<Task | undefined> {
    const counts = await this.counts(known, accountId);
    if (counts.pending === 0) return undefined;
    const oldest = await this.tasks.oldestPending(accountId);
    if (!oldest) {
      known.unsureOf(accountId);
      return undefined;
    }
    return counts.running < oldest.concurrency_limit ? oldest : undefined;
  }
}
