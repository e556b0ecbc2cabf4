import type { PendingDoc, Stored } from '../domain/stored-event.js';
import type { DeliveryJob } from './endpoint-queues.js';
import type { TaskOrdering } from './task-ordering.js';

/** The scheduler as the lanes feed it. */
export interface DeliveryQueue {
  /** Event ids this replica has in hand: queued, waiting behind a predecessor, being checked, in flight or finishing. */
  readonly inHand: Set<string>;
  /** Queues a delivery (or, its endpoint's queue full, leaves it to the database). */
  enqueue(job: DeliveryJob): void;
  /** Starts the queued deliveries that can start. */
  pump(): void;
}

/**
 * The replica that stores a webhook event delivers its first attempt itself, at once, with no
 * database poll: the pending document it inserted is in the `fast` lane, left alone by the other
 * replicas until its hand-off time (a lease after storing). An event whose predecessors were all
 * stored here goes when the one before it is done, with no read at all (TaskOrdering); one it
 * cannot place that way (a predecessor went through another replica) waits here, in the checks,
 * and is placed by reading the task's pending documents at each poll.
 */
export class FastLane {
  /** Event id → a fast-lane event of ours waiting to be placed by reading the database. */
  private readonly checks = new Map<string, PendingDoc>();
  /** Task → when its checks are worth running again (its blocker's next attempt, or the next poll). */
  private readonly checkAfter = new Map<string, number>();

  constructor(
    private readonly ordering: TaskOrdering,
    private readonly queue: DeliveryQueue,
    private readonly options: { pollIntervalMs: number; concurrency: number },
  ) {}

  /** Events waiting in the checks. */
  get waiting(): number {
    return this.checks.size;
  }

  /**
   * Takes what the consumer just stored, in queue order: a new pending event goes to its
   * endpoint's queue when all its task's earlier versions are done here, behind its predecessor
   * when that one is pending here, or to the checks otherwise.
   */
  accept(stored: readonly Stored[]): void {
    for (const s of stored) {
      const arrival = this.ordering.arrive(s);
      if (s.kind !== 'pending') continue;
      this.queue.inHand.add(s.doc.event_id);
      if (arrival === 'check') this.checks.set(s.doc.event_id, s.doc);
      else if (arrival === 'go') this.queue.enqueue({ doc: s.doc, suspect: false });
    }
  }

  /**
   * After an attempt: the next event of the task here goes, or (when this one is not done) its
   * followers are checked instead. True when a next event of the task was known here.
   */
  settled(doc: PendingDoc, terminal: boolean): boolean {
    const { next, unplaced } = this.ordering.settled(doc, terminal);
    if (next) this.queue.enqueue({ doc: next, suspect: false });
    for (const follower of unplaced) this.checks.set(follower.event_id, follower);
    return next !== undefined;
  }

  /**
   * An event is done (its outcome recorded), and no follower of it is in hand here: its task's
   * next events are read and taken as if stored here (TaskOrdering.adopt), so they follow within
   * moments instead of waiting for a poll (a retried event's followers, or a dead replica's). The
   * first one's claim may be held by a replica that died: it is suspect.
   */
  async chase(done: PendingDoc): Promise<void> {
    const chain = await this.ordering.adopt(done, Date.now(), (id) => this.queue.inHand.has(id));
    for (const d of chain) this.queue.inHand.add(d.event_id);
    const [first] = chain;
    if (!first) return;
    this.queue.enqueue({ doc: first, suspect: true });
    this.queue.pump();
  }

  /** The event is left to the database: what followed it here is checked from now on. */
  handOver(doc: PendingDoc): void {
    for (const follower of this.ordering.handOver(doc)) this.checks.set(follower.event_id, follower);
  }

  /** Whether an event of the task waits in the checks. */
  checking(taskId: string): boolean {
    for (const c of this.checks.values()) if (c.task_id === taskId) return true;
    return false;
  }

  /**
   * An event of the task is done and gone from the database: a follower waiting in the checks
   * may go now (its read no longer sees that one pending). True when one is waiting (look again now).
   */
  predecessorGone(taskId: string): boolean {
    for (const c of this.checks.values()) {
      if (c.task_id === taskId) {
        this.checkAfter.delete(taskId);
        return true;
      }
    }
    return false;
  }

  /** Places the events waiting in the checks whose turn has come; those past their hand-off go to the pollers. */
  async runChecks(now: number): Promise<void> {
    if (this.checks.size === 0) return;
    const lowest = new Map<string, PendingDoc>();
    for (const doc of this.checks.values()) {
      const other = lowest.get(doc.task_id);
      if (!other || doc.version < other.version) lowest.set(doc.task_id, doc);
    }
    const due: PendingDoc[] = [];
    for (const doc of lowest.values()) {
      if ((doc.next_attempt_at?.getTime() ?? 0) <= now) {
        // Its hand-off time has passed: the full scans (ours included) take it, with a claim.
        for (const [id, d] of this.checks) {
          if (d.task_id === doc.task_id) {
            this.checks.delete(id);
            this.queue.inHand.delete(id);
          }
        }
        this.checkAfter.delete(doc.task_id);
        continue;
      }
      if ((this.checkAfter.get(doc.task_id) ?? 0) > now) continue;
      if (due.length < this.options.concurrency) due.push(doc);
    }
    const placements = await this.ordering.placeAll(due, now);
    due.forEach((doc, i) => {
      const p = placements[i];
      if (!p || p.kind !== 'head') {
        this.checkAfter.set(doc.task_id, p?.until ?? now + this.options.pollIntervalMs);
        return;
      }
      this.checkAfter.delete(doc.task_id);
      this.checks.delete(doc.event_id);
      this.queue.enqueue({ doc, suspect: false });
    });
    this.queue.pump();
  }
}
