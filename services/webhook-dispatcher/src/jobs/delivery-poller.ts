import type { Logger } from '@tes/logger';
import type { AttemptOutcome } from '../domain/deliver-event.use-case.js';
import type { ClaimStore, PendingStore } from '../domain/ports.js';
import { slotOf, type PendingDoc } from '../domain/stored-event.js';
import type { DeliveryJob, EndpointQueues } from '../scheduling/endpoint-queues.js';
import type { DeliveryQueue, FastLane } from '../scheduling/fast-lane.js';
import type { TaskOrdering } from '../scheduling/task-ordering.js';

/** An open-lane event scheduled by another replica is left to it for this long after it is due. */
const OWNER_GRACE_MS = 1000;

interface PollerDeps {
  pending: Pick<PendingStore, 'openSlot' | 'all'>;
  claims: Pick<ClaimStore, 'recentOf'>;
  /** Names this replica in the pending documents it schedules. */
  holder: string;
  /** A claim older than this is abandoned. */
  leaseMs: number;
  logger: Logger;
}

interface PollerOptions {
  pollIntervalMs: number;
  concurrency: number;
}

/** What the poller needs of the scheduler and its other parts. */
interface PollerParts {
  queue: DeliveryQueue & {
    /** Deliveries in flight plus those queued for an endpoint below its limit. */
    runnable(): number;
  };
  queues: Pick<EndpointQueues, 'isBusy'>;
  ordering: Pick<TaskOrdering, 'placeAll'>;
  fastLane: Pick<FastLane, 'runChecks'>;
}

/**
 * Every POLL_INTERVAL_MS (or when woken) it runs the fast lane's checks and reads the `open` lane
 * (retries, redeliveries, test events) one due-time slot (a quarter second) at a time: each slot
 * once it has ended, and again those it left due events in. Every few seconds it reads every
 * pending document instead, which also finds the `fast` lane's overdue ones (stored by a replica
 * that died before delivering them). A candidate goes only if no lower version of its task is
 * pending, and, while fresh, once its predecessor has arrived (ORDER_GAP_WAIT_MS at most).
 */
export class DeliveryPoller {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;
  private woken = false;
  /** `${event_id}:${attempt}` → until when another replica holds that claim (epoch ms). */
  private readonly held = new Map<string, number>();
  private nextFullScan = 0;
  /** The open lane's slots up to this one have been read since they came due. */
  private polledSlot = Number.NEGATIVE_INFINITY;
  /** Slots where due events were left (held by another replica, blocked, no room) → when to read them again. */
  private readonly leftoverSlots = new Map<number, number>();
  /** Event ids of the polled events queued or in flight here. */
  private readonly polled = new Set<string>();
  /** Events claimed by a holder found gone: due now, whatever their schedule says (kept while they are pending). */
  private orphans = new Set<string>();

  constructor(
    private readonly deps: PollerDeps,
    private readonly options: PollerOptions,
    private readonly parts: PollerParts,
    /** Whether a holder is known to be gone (HolderLiveness); never, without one. */
    private readonly isGone: (holder: string) => boolean = () => false,
  ) {}

  /**
   * A holder was found gone: the events it claimed lately (in flight when it died) and the
   * fast-lane events it stored are taken over at the next round, which reads everything pending.
   */
  async holderGone(holder: string): Promise<void> {
    const claimed = await this.deps.claims.recentOf(holder, new Date(Date.now() - this.deps.leaseMs));
    for (const id of claimed) this.orphans.add(id);
    // Claims counted as held for a lease may be that holder's.
    this.held.clear();
    this.nextFullScan = 0;
    this.wake();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Look again now. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops polling; resolves when the round under way is over. */
  stop(): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    return this.loopDone;
  }

  /** After an attempt: a polled event is no longer ours; a claim another replica holds is not tried again before it expires. */
  settled(doc: PendingDoc, outcome: AttemptOutcome): void {
    this.polled.delete(doc.event_id);
    if (outcome.kind === 'held' && outcome.heldUntil) this.held.set(claimKey(doc), outcome.heldUntil.getTime());
  }

  /** The event was left to the database. */
  forget(eventId: string): void {
    this.polled.delete(eventId);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        await this.tick();
      } catch (err) {
        this.deps.logger.warn('delivery poll failed', { error: String(err) });
      }
      if (this.running) await this.pause();
    }
  }

  private pause(): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollIntervalMs);
      this.wakeUp = () => {
        this.woken = false;
        done();
      };
    });
  }

  /** One round: the checks, then (with room left) the open lane's due slots, or now and then everything pending. */
  private async tick(): Promise<void> {
    const { queue, queues, ordering, fastLane } = this.parts;
    const now = Date.now();
    for (const [key, until] of this.held) if (until <= now) this.held.delete(key);
    // Polled events (retries, redeliveries, abandoned ones) take the room fresh events leave, but
    // always at least an eighth of it: a burst of new events delays retries, never starves them.
    const room = Math.max(this.options.concurrency - queue.runnable(), Math.ceil(this.options.concurrency / 8) - this.polled.size);
    const [, candidates] = await Promise.all([fastLane.runChecks(now), room > 0 ? this.readDue(now) : Promise.resolve([])]);
    if (room <= 0) return;
    const later = (c: DeliveryJob, at: number) => {
      if (c.doc.lane === 'open') this.revisit(slotOf(c.doc), at);
    };
    const fresh: DeliveryJob[] = [];
    for (const c of candidates) {
      if (queue.inHand.has(c.doc.event_id)) continue;
      const heldUntil = this.held.get(claimKey(c.doc));
      if (heldUntil !== undefined) later(c, heldUntil);
      // Not for an endpoint that is busy here already: its events wait in the database, not in memory.
      else if (queues.isBusy(c.doc)) later(c, now + this.options.pollIntervalMs);
      else fresh.push(c);
    }
    fresh.sort((a, b) => (a.doc.next_attempt_at?.getTime() ?? 0) - (b.doc.next_attempt_at?.getTime() ?? 0));
    // One event per task and round: the lowest pending version, once placed.
    const perTask = new Map<string, DeliveryJob>();
    for (const c of fresh) {
      const other = perTask.get(c.doc.task_id);
      if (!other || c.doc.version < other.doc.version) perTask.set(c.doc.task_id, c);
    }
    const considered = [...perTask.values()].slice(0, room);
    const chosen = new Set(considered);
    for (const c of fresh) if (!chosen.has(c)) later(c, now + this.options.pollIntervalMs);
    const placements = await ordering.placeAll(
      considered.map((c) => c.doc),
      now,
    );
    considered.forEach((c, i) => {
      const p = placements[i];
      if (p?.kind !== 'head') {
        later(c, p?.until ?? now + this.options.pollIntervalMs);
        return;
      }
      if (queue.inHand.has(c.doc.event_id)) return;
      queue.inHand.add(c.doc.event_id);
      this.polled.add(c.doc.event_id);
      queue.enqueue(c);
    });
    queue.pump();
  }

  /** Reads an open-lane slot again at `at` (due events were left in it). */
  private revisit(slot: number, at: number): void {
    const current = this.leftoverSlots.get(slot);
    if (current === undefined || at < current) this.leftoverSlots.set(slot, at);
  }

  /**
   * The due pending events, as cheaply as FerretDB v1 allows (it reads whole collections and only
   * pushes equalities down to PostgreSQL): normally the open lane's due slots, each an equality;
   * every few seconds (and at start) the whole pending collection, which is what finds the
   * abandoned fast-lane events and whatever a slot read missed.
   */
  private async readDue(now: number): Promise<DeliveryJob[]> {
    const nowSlot = slotOf({ next_attempt_at: new Date(now) });
    const due: DeliveryJob[] = [];
    const take = (doc: PendingDoc) => {
      const at = doc.next_attempt_at?.getTime() ?? 0;
      // A gone holder's claim, or a fast-lane event it stored: due now (a retry keeps its schedule).
      const holderGone = doc.holder !== undefined && this.isGone(doc.holder);
      const claimedByGone = this.orphans.has(doc.event_id);
      if (at > now && !(doc.lane === 'fast' && (holderGone || claimedByGone))) return;
      if (!holderGone && doc.lane === 'open' && doc.holder !== undefined && doc.holder !== this.deps.holder && at + OWNER_GRACE_MS > now) {
        // Due, but its scheduler's to take first: look again once the grace is over.
        this.revisit(slotOf(doc), at + OWNER_GRACE_MS);
        return;
      }
      // Overdue by a lease (open), or past its hand-off (fast): whoever held it may have died.
      due.push({ doc, suspect: claimedByGone || holderGone || doc.lane === 'fast' || at <= now - this.deps.leaseMs });
    };
    if (now >= this.nextFullScan || nowSlot - this.polledSlot > 40) {
      this.nextFullScan = now + Math.min(10_000, Math.max(this.options.pollIntervalMs, this.deps.leaseMs / 3));
      this.polledSlot = nowSlot - 1;
      this.leftoverSlots.clear();
      const all = await this.deps.pending.all();
      // Orphans no longer pending are done.
      const pendingIds = new Set(all.map((d) => d.event_id));
      this.orphans = new Set([...this.orphans].filter((id) => pendingIds.has(id)));
      for (const doc of all) take(doc);
      return due;
    }
    const slots = new Set<number>();
    for (const [slot, at] of this.leftoverSlots) {
      if (at > now) continue;
      slots.add(slot);
      this.leftoverSlots.delete(slot);
    }
    // A slot is read once it has ended (everything in it is due), not while it is current: each
    // slot is read about once per replica. Retries always land in a slot that has not ended yet.
    for (let s = this.polledSlot + 1; s < nowSlot; s++) slots.add(s);
    this.polledSlot = Math.max(this.polledSlot, nowSlot - 1);
    const lists = await Promise.all([...slots].map((s) => this.deps.pending.openSlot(s)));
    for (const list of lists) for (const doc of list) take(doc);
    return due;
  }
}

function claimKey(e: Pick<PendingDoc, 'event_id' | 'attempts_made'>): string {
  return `${e.event_id}:${e.attempts_made + 1}`;
}
