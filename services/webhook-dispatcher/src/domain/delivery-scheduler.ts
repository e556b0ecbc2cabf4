import type { Logger } from '@tes/logger';
import type { EventDoc, EventRepository } from '../store/event.repository.js';
import { slotOf, type PendingDoc, type PendingRepository } from '../store/pending.repository.js';
import { attemptDelivery, type AttemptOutcome, type DeliverDeps } from './deliver-event.use-case.js';

export interface SchedulerOptions {
  pollIntervalMs: number;
  /** Deliveries in flight in this replica. */
  concurrency: number;
  /** Deliveries in flight in this replica to one account environment. */
  endpointConcurrency: number;
  /** How long an event waits for its predecessor version before it goes anyway. */
  orderGapWaitMs: number;
}

export interface SchedulerDeps extends DeliverDeps {
  events: EventRepository;
  pending: PendingRepository;
  logger: Logger;
}

/** What the consumer stored, in queue order: a pending event (fast lane) or a final marker (skipped, no_endpoint). */
export type Stored =
  { kind: 'pending'; doc: PendingDoc } | { kind: 'final'; doc: Pick<EventDoc, 'account_id' | 'environment' | 'task_id' | 'version'> };

interface Job {
  doc: PendingDoc;
  /** Read from an overdue document: its claim's holder may have died, so a lost claim is looked at. */
  suspect: boolean;
}

/** What this replica knows of a task from the events it stored itself, in queue order. */
interface TaskLocal {
  /** Every version up to this one was stored here, and is done or in `chain`. */
  frontier: number;
  /** This replica's pending events of the task, in version order; the first one is being delivered. */
  chain: PendingDoc[];
}

type Placement = { kind: 'head' } | { kind: 'wait'; until: number };

const MAX_TASKS = 100_000;
/** Events queued here for one endpoint at most; beyond, they wait in the database for their hand-off time. */
const MAX_QUEUED_PER_ENDPOINT = 5000;
/** Placements (reads of a task's pending events) run at once. */
const PLACEMENT_CONCURRENCY = 4;
/** An open-lane event scheduled by another replica is left to it for this long after it is due. */
const OWNER_GRACE_MS = 1000;

/**
 * Runs the deliveries of one replica.
 *
 * Fast path. The replica that stores a webhook event delivers its first attempt itself, at
 * once, with no database poll: the pending document it inserted is in the `fast` lane, left
 * alone by the other replicas until its hand-off time (a lease after storing). Per task, the
 * replica knows which versions it stored, in queue order; an event whose predecessors were all
 * stored here goes when the one before it is done (delivered, undeliverable, or a skipped
 * marker), with no read at all. An event it cannot place that way (a predecessor went through
 * another replica) waits in `checks` and is placed by reading the task's pending documents.
 *
 * Poller. Every POLL_INTERVAL_MS (or when woken) it reads the `open` lane (retries, redeliveries,
 * test events) one due-time slot (a quarter second) at a time: each slot once it has ended, and
 * again those it left due events in. Every few seconds it reads every
 * pending document instead, which also finds the `fast` lane's overdue ones (stored by a replica
 * that died before delivering them). A candidate goes only if no lower version of its task is
 * pending, and, while fresh, once its predecessor has arrived (ORDER_GAP_WAIT_MS at most).
 *
 * Both feed per-endpoint queues, served round robin, at most DELIVERY_CONCURRENCY in flight and
 * ENDPOINT_CONCURRENCY per account environment: a slow endpoint fills only its own queue.
 * Delays live in the database, never in timers: any replica picks up any due attempt, and a
 * restart loses none.
 */
export class DeliveryScheduler {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;
  private woken = false;
  /** Event ids this replica has in hand: queued, waiting behind a predecessor, being checked, in flight or finishing. */
  private readonly local = new Set<string>();
  private readonly ready = new Map<string, Job[]>();
  private readyOrder: string[] = [];
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Outcomes recorded, their final writes under way (they do not hold a delivery slot). */
  private readonly finishing = new Set<Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  /** `${event_id}:${attempt}` → until when another replica holds that claim (epoch ms). */
  private readonly held = new Map<string, number>();
  private readonly tasks = new Map<string, TaskLocal>();
  /** Event id → a fast-lane event of ours waiting to be placed by reading the database. */
  private readonly checks = new Map<string, PendingDoc>();
  /** Task → when its checks are worth running again (its blocker's next attempt, or the next poll). */
  private readonly checkAfter = new Map<string, number>();
  /** Task → versions known to have been stored (seen pending or stored here): no read needed to know they arrived. */
  private readonly arrived = new Map<string, Set<number>>();
  private nextFullScan = 0;
  /** The open lane's slots up to this one have been read since they came due. */
  private polledSlot = Number.NEGATIVE_INFINITY;
  /** Slots where due events were left (held by another replica, blocked, no room) → when to read them again. */
  private readonly leftoverSlots = new Map<number, number>();
  /** Event ids of the polled events queued or in flight here. */
  private readonly polled = new Set<string>();
  private roomWaiters: (() => void)[] = [];

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Look again now (an open-lane event was stored: redeliver, test event). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Resolves when this replica can take more events: the consumer waits here, so a busy replica
   * leaves the queue's messages to the others. Only deliveries that could start now count:
   * events queued for an endpoint at its limit never hold up other accounts' events.
   */
  whenRoom(): Promise<void> {
    if (this.hasRoom()) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  private hasRoom(): boolean {
    return !this.running || this.runnable() < this.options.concurrency * 4;
  }

  /** Deliveries in flight plus those queued for an endpoint below its limit. */
  private runnable(): number {
    let n = this.inFlight.size;
    for (const [key, q] of this.ready) if (!this.endpointFull(key)) n += q.length;
    return n;
  }

  private endpointFull(key: string): boolean {
    return (this.perEndpoint.get(key) ?? 0) >= this.options.endpointConcurrency;
  }

  /** Stops polling and waits up to `timeoutMs` for the deliveries in flight; the queued ones stay for whoever comes next. */
  async stop(timeoutMs: number): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    this.releaseRoom();
    await this.loopDone;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.inFlight.values()]), timeout]);
    await Promise.race([Promise.allSettled([...this.finishing]), timeout]);
    clearTimeout(timer);
  }

  /**
   * Takes what the consumer just stored, in queue order. New pending events go straight to
   * their endpoint's queue when all their task's earlier versions are known done here, behind
   * their predecessor when it is pending here, or to the checks otherwise.
   */
  accept(stored: readonly Stored[]): void {
    for (const s of stored) {
      this.noteArrived(s.doc.task_id, s.doc.version);
      const rec = this.tasks.get(s.doc.task_id);
      const contiguous = rec ? rec.frontier === s.doc.version - 1 : s.doc.version === 1;
      if (s.kind === 'final') {
        if (rec && contiguous) rec.frontier = s.doc.version;
        else if (!rec && contiguous) this.remember(s.doc.task_id, { frontier: 1, chain: [] });
        continue;
      }
      const doc = s.doc;
      this.local.add(doc.event_id);
      if (!contiguous) {
        this.checks.set(doc.event_id, doc);
        continue;
      }
      const task = rec ?? this.remember(doc.task_id, { frontier: 0, chain: [] });
      task.frontier = doc.version;
      task.chain.push(doc);
      if (task.chain.length === 1) this.enqueue({ doc, suspect: false });
    }
    this.pump();
    if (this.checks.size > 0) this.wake();
  }

  private remember(taskId: string, rec: TaskLocal): TaskLocal {
    if (this.tasks.size >= MAX_TASKS) {
      // Forget the oldest tasks with nothing pending here (their next events take the checked path).
      for (const [id, t] of this.tasks) {
        if (this.tasks.size < MAX_TASKS * 0.9) break;
        if (t.chain.length === 0) this.tasks.delete(id);
      }
    }
    this.tasks.set(taskId, rec);
    return rec;
  }

  private noteArrived(taskId: string, version: number): void {
    let versions = this.arrived.get(taskId);
    if (!versions) {
      if (this.arrived.size >= MAX_TASKS) {
        for (const id of this.arrived.keys()) {
          this.arrived.delete(id);
          if (this.arrived.size < MAX_TASKS * 0.9) break;
        }
      }
      versions = new Set();
      this.arrived.set(taskId, versions);
    }
    versions.add(version);
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
  async tick(): Promise<void> {
    const now = Date.now();
    for (const [key, until] of this.held) if (until <= now) this.held.delete(key);
    // Polled events (retries, redeliveries, abandoned ones) take the room fresh events leave, but
    // always at least an eighth of it: a burst of new events delays retries, never starves them.
    const room = Math.max(this.options.concurrency - this.runnable(), Math.ceil(this.options.concurrency / 8) - this.polled.size);
    const [, candidates] = await Promise.all([this.runChecks(now), room > 0 ? this.readDue(now) : Promise.resolve([])]);
    if (room <= 0) return;
    const later = (c: Job, at: number) => {
      if (c.doc.lane === 'open') this.revisit(slotOf(c.doc), at);
    };
    const fresh: Job[] = [];
    for (const c of candidates) {
      if (this.local.has(c.doc.event_id)) continue;
      const heldUntil = this.held.get(claimKey(c.doc));
      if (heldUntil !== undefined) later(c, heldUntil);
      // Not for an endpoint that is busy here already: its events wait in the database, not in memory.
      else if (
        this.endpointFull(endpointKey(c.doc)) ||
        (this.ready.get(endpointKey(c.doc))?.length ?? 0) >= this.options.endpointConcurrency
      )
        later(c, now + this.options.pollIntervalMs);
      else fresh.push(c);
    }
    fresh.sort((a, b) => (a.doc.next_attempt_at?.getTime() ?? 0) - (b.doc.next_attempt_at?.getTime() ?? 0));
    // One event per task and round: the lowest pending version, once placed.
    const perTask = new Map<string, Job>();
    for (const c of fresh) {
      const other = perTask.get(c.doc.task_id);
      if (!other || c.doc.version < other.doc.version) perTask.set(c.doc.task_id, c);
    }
    const considered = [...perTask.values()].slice(0, room);
    const chosen = new Set(considered);
    for (const c of fresh) if (!chosen.has(c)) later(c, now + this.options.pollIntervalMs);
    const placements = await this.placeAll(
      considered.map((c) => c.doc),
      now,
    );
    considered.forEach((c, i) => {
      const p = placements[i];
      if (p?.kind !== 'head') {
        later(c, p?.until ?? now + this.options.pollIntervalMs);
        return;
      }
      if (this.local.has(c.doc.event_id)) return;
      this.local.add(c.doc.event_id);
      this.polled.add(c.doc.event_id);
      this.enqueue(c);
    });
    this.pump();
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
  private async readDue(now: number): Promise<Job[]> {
    const nowSlot = slotOf({ next_attempt_at: new Date(now) });
    const due: Job[] = [];
    const take = (doc: PendingDoc) => {
      const at = doc.next_attempt_at?.getTime() ?? 0;
      if (at > now) return;
      if (doc.lane === 'open' && doc.holder !== undefined && doc.holder !== this.deps.holder && at + OWNER_GRACE_MS > now) {
        // Due, but its scheduler's to take first: look again once the grace is over.
        this.revisit(slotOf(doc), at + OWNER_GRACE_MS);
        return;
      }
      // Overdue by a lease (open), or past its hand-off (fast): whoever held it may have died.
      due.push({ doc, suspect: doc.lane === 'fast' || at <= now - this.deps.leaseMs });
    };
    if (now >= this.nextFullScan || nowSlot - this.polledSlot > 40) {
      this.nextFullScan = now + Math.min(10_000, Math.max(this.options.pollIntervalMs, this.deps.leaseMs / 3));
      this.polledSlot = nowSlot - 1;
      this.leftoverSlots.clear();
      for (const doc of await this.deps.pending.all()) take(doc);
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

  /** Places the events waiting in `checks` whose turn has come; those past their hand-off go to the pollers. */
  private async runChecks(now: number): Promise<void> {
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
            this.local.delete(id);
          }
        }
        this.checkAfter.delete(doc.task_id);
        continue;
      }
      if ((this.checkAfter.get(doc.task_id) ?? 0) > now) continue;
      if (due.length < this.options.concurrency) due.push(doc);
    }
    const placements = await this.placeAll(due, now);
    due.forEach((doc, i) => {
      const p = placements[i];
      if (!p || p.kind !== 'head') {
        this.checkAfter.set(doc.task_id, p?.until ?? now + this.options.pollIntervalMs);
        return;
      }
      this.checkAfter.delete(doc.task_id);
      this.checks.delete(doc.event_id);
      this.enqueue({ doc, suspect: false });
    });
    this.pump();
  }

  private async placeAll(docs: readonly PendingDoc[], now: number): Promise<Placement[]> {
    const out: Placement[] = [];
    for (let i = 0; i < docs.length; i += PLACEMENT_CONCURRENCY) {
      out.push(...(await Promise.all(docs.slice(i, i + PLACEMENT_CONCURRENCY).map((d) => this.placement(d, now)))));
    }
    return out;
  }

  /**
   * Whether an event may go now: no lower version of its task pending (read first), and, while
   * it is fresh, its predecessor stored (read second: a pending event's final state is inserted
   * before its pending document is removed, so one of the two reads sees it). When it may not,
   * when to look again: at its blocker's next attempt when that is a retry, else soon.
   */
  private async placement(e: PendingDoc, now: number): Promise<Placement> {
    const soon = now + this.options.pollIntervalMs;
    const rec = this.tasks.get(e.task_id);
    // Every earlier version was stored here and is done: nothing to read.
    if (rec && rec.chain.length === 0 && rec.frontier >= e.version - 1) return { kind: 'head' };
    if (e.version > 1) {
      const pending = await this.deps.pending.ofTask(e);
      for (const p of pending) this.noteArrived(p.task_id, p.version);
      const blockers = pending.filter((p) => p.version < e.version);
      if (blockers.length > 0) {
        const next = Math.min(...blockers.map((b) => (b.attempts_made > 0 ? (b.next_attempt_at?.getTime() ?? soon) : soon)));
        return { kind: 'wait', until: Math.max(soon, next) };
      }
    }
    if (e.version > 1 && e.attempts_made === 0 && now - e.received_at.getTime() < this.options.orderGapWaitMs) {
      // Its predecessor may still be on its way (competing consumers): give it a moment.
      if (!this.arrived.get(e.task_id)?.has(e.version - 1) && !(await this.deps.events.hasVersion(e, e.version - 1))) {
        return { kind: 'wait', until: Math.min(soon, e.received_at.getTime() + this.options.orderGapWaitMs) };
      }
    }
    return { kind: 'head' };
  }

  private enqueue(job: Job): void {
    const key = endpointKey(job.doc);
    const q = this.ready.get(key);
    if (q && q.length >= MAX_QUEUED_PER_ENDPOINT) {
      this.handOver(job.doc);
      return;
    }
    if (q) q.push(job);
    else {
      this.ready.set(key, [job]);
      this.readyOrder.push(key);
    }
  }

  /** Starts queued deliveries: round robin over endpoints, within both limits. */
  private pump(): void {
    let skipped = 0;
    // Final writes lagging far behind the deliveries: let the database catch up first.
    const backlog = this.finishing.size >= this.options.concurrency * 4;
    while (this.running && !backlog && this.inFlight.size < this.options.concurrency && this.readyOrder.length > skipped) {
      const key = this.readyOrder.shift() as string;
      const q = this.ready.get(key);
      if (!q || q.length === 0) {
        this.ready.delete(key);
        continue;
      }
      if (this.endpointFull(key)) {
        this.readyOrder.push(key);
        skipped += 1;
        continue;
      }
      skipped = 0;
      const job = q.shift() as Job;
      if (q.length > 0) this.readyOrder.push(key);
      else this.ready.delete(key);
      this.launch(job, key);
    }
    this.releaseRoom();
  }

  /** Leaves an event to the database (pollers take it at its hand-off time); what followed it here is checked from now on. */
  private handOver(doc: PendingDoc): void {
    this.local.delete(doc.event_id);
    this.polled.delete(doc.event_id);
    const rec = this.tasks.get(doc.task_id);
    if (rec && rec.chain[0]?.event_id === doc.event_id) {
      for (const follower of rec.chain.slice(1)) this.checks.set(follower.event_id, follower);
      this.tasks.delete(doc.task_id);
    }
  }

  private releaseRoom(): void {
    if (!this.hasRoom()) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }

  private launch(job: Job, key: string): void {
    const { doc } = job;
    this.perEndpoint.set(key, (this.perEndpoint.get(key) ?? 0) + 1);
    const run = attemptDelivery(doc, this.deps, { suspect: job.suspect })
      .then((outcome) => this.settled(doc, outcome))
      .catch((err: unknown) => {
        this.deps.logger.warn('delivery attempt failed to run; it will be retried after its claim expires', {
          event_id: doc.event_id,
          error: String(err),
        });
        this.settled(doc, { kind: 'stale' });
      })
      .finally(() => {
        this.inFlight.delete(doc.event_id);
        const left = (this.perEndpoint.get(key) ?? 1) - 1;
        if (left > 0) this.perEndpoint.set(key, left);
        else this.perEndpoint.delete(key);
        this.pump();
      });
    this.inFlight.set(doc.event_id, run);
  }

  /** After an attempt: the next event of the task here goes, or (when this one is not done) its followers are checked instead. */
  private settled(doc: PendingDoc, outcome: AttemptOutcome): void {
    this.polled.delete(doc.event_id);
    if (outcome.kind === 'done') {
      // Still ours until its pending document is gone or rescheduled: the poller leaves it alone.
      const writes = outcome.finishing
        .catch((err: unknown) =>
          this.deps.logger.warn('moving a delivered event on failed; it is repaired after its lease', {
            event_id: doc.event_id,
            error: String(err),
          }),
        )
        .finally(() => {
          this.finishing.delete(writes);
          this.local.delete(doc.event_id);
          // A follower of this task waiting in the checks may go now (its read no longer sees this one pending).
          if (outcome.terminal && this.checksHaveTask(doc.task_id)) {
            this.checkAfter.delete(doc.task_id);
            this.wake();
          }
          this.pump();
        });
      this.finishing.add(writes);
    } else {
      this.local.delete(doc.event_id);
    }
    if (outcome.kind === 'held' && outcome.heldUntil) this.held.set(claimKey(doc), outcome.heldUntil.getTime());
    const rec = this.tasks.get(doc.task_id);
    const terminal = outcome.kind === 'done' && outcome.terminal;
    if (rec && rec.chain[0]?.event_id === doc.event_id) {
      rec.chain.shift();
      if (terminal) {
        const next = rec.chain[0];
        if (next) this.enqueue({ doc: next, suspect: false });
      } else {
        // Not done here (a retry is scheduled, or another replica holds it): what followed it
        // is placed by reading the database from now on.
        for (const follower of rec.chain) this.checks.set(follower.event_id, follower);
        this.tasks.delete(doc.task_id);
      }
    }
  }

  private checksHaveTask(taskId: string): boolean {
    for (const c of this.checks.values()) if (c.task_id === taskId) return true;
    return false;
  }
}

function claimKey(e: Pick<PendingDoc, 'event_id' | 'attempts_made'>): string {
  return `${e.event_id}:${e.attempts_made + 1}`;
}

function endpointKey(e: Pick<EventDoc, 'account_id' | 'environment'>): string {
  return `${e.account_id}:${e.environment}`;
}
