import type { Logger } from '@tes/logger';
import type { EventDoc, EventRepository } from '../store/event.repository.js';
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
  logger: Logger;
}

/**
 * The poller: finds pending events whose `next_attempt_at` has come, keeps only the head of
 * each task (the lowest pending version), and runs their attempts concurrently, bounded per
 * replica and per endpoint, so a slow endpoint delays only its own events. Delays live in the
 * database, never in timers: any replica picks up any due attempt, and a restart loses none.
 *
 * An event blocked by an earlier pending event of its task is parked until that one's next
 * attempt (plus the lease), so a long queue behind a failing endpoint does not crowd the
 * query; whoever finishes the blocker wakes it at once.
 */
export class DeliveryScheduler {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private readonly inFlight = new Map<string, Promise<void>>();
  /** `${account_id}:${environment}` → deliveries in flight here, with the key's parts. */
  private readonly perEndpoint = new Map<string, { count: number; account_id: string; environment: EventDoc['environment'] }>();
  /** `${event_id}:${attempt}` → until when another replica holds that claim. */
  private readonly held = new Map<string, { eventId: string; until: number }>();

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Look again now (a new event was stored, or an event of a task finished). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Stops polling and waits up to `timeoutMs` for the deliveries in flight. */
  async stop(timeoutMs: number): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    await this.loopDone;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.inFlight.values()]), timeout]);
    clearTimeout(timer);
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let again = false;
      try {
        again = await this.tick();
      } catch (err) {
        this.deps.logger.warn('delivery poll failed', { error: String(err) });
      }
      if (!again && this.running) await this.pause();
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

  /** One poll; true when it should run again at once (a full batch that made progress). */
  async tick(): Promise<boolean> {
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return false;
    const now = new Date();
    for (const [key, h] of this.held) if (h.until <= now.getTime()) this.held.delete(key);

    const limit = Math.min(free * 2 + 8, 500);
    const full = [...this.perEndpoint.values()].filter((p) => p.count >= this.options.endpointConcurrency);
    const due = await this.deps.events.due(now, limit, {
      ids: [...this.inFlight.keys(), ...[...this.held.values()].map((h) => h.eventId)],
      endpoints: full.map((p) => ({ account_id: p.account_id, environment: p.environment })),
    });
    const candidates = due.filter(
      (e) => !this.inFlight.has(e._id) && !this.held.has(claimKey(e)) && this.endpointCount(e) < this.options.endpointConcurrency,
    );
    const verdicts = await Promise.all(candidates.map((e) => this.readiness(e, now)));
    let progress = false;
    candidates.forEach((e, i) => {
      const verdict = verdicts[i];
      if (verdict === 'parked') progress = true;
      if (verdict !== 'head' || !this.running || this.inFlight.size >= this.options.concurrency) return;
      if (this.endpointCount(e) >= this.options.endpointConcurrency) return;
      this.launch(e);
      progress = true;
    });
    return due.length === limit && progress;
  }

  /** head: may be attempted now; parked/waiting: an earlier event of its task goes first. */
  private async readiness(e: EventDoc, now: Date): Promise<'head' | 'parked' | 'waiting'> {
    const blocker = await this.deps.events.blockerOf(e);
    if (blocker) {
      const blockerNext = Math.max(blocker.next_attempt_at?.getTime() ?? now.getTime(), now.getTime());
      // (An event attempted before its blocker arrived keeps its own schedule: it just waits.)
      if (!(await this.deps.events.park(e._id, new Date(blockerNext + this.deps.leaseMs)))) return 'waiting';
      // The blocker may have finished between the read and the park: then wake it here.
      const again = await this.deps.events.get(blocker._id);
      if (!again || again.status !== 'pending') {
        await this.deps.events.wake(e._id, new Date());
        return 'waiting';
      }
      return 'parked';
    }
    if (e.version > 1 && e.attempts_made === 0 && now.getTime() - e.received_at.getTime() < this.options.orderGapWaitMs) {
      // Its predecessor may still be on its way (competing consumers): give it a moment.
      if (!(await this.deps.events.hasVersion(e, e.version - 1))) return 'waiting';
    }
    return 'head';
  }

  private endpointCount(e: EventDoc): number {
    return this.perEndpoint.get(endpointKey(e))?.count ?? 0;
  }

  private launch(e: EventDoc): void {
    const ek = endpointKey(e);
    const slot = this.perEndpoint.get(ek) ?? { count: 0, account_id: e.account_id, environment: e.environment };
    slot.count += 1;
    this.perEndpoint.set(ek, slot);
    const run = attemptDelivery(e, this.deps)
      .then((outcome: AttemptOutcome) => {
        if (outcome.kind === 'held' && outcome.heldUntil)
          this.held.set(claimKey(e), { eventId: e._id, until: outcome.heldUntil.getTime() });
        if (outcome.kind === 'done' && outcome.terminal) this.wake();
      })
      .catch((err: unknown) => {
        this.deps.logger.warn('delivery attempt failed to run; it will be retried after its claim expires', {
          event_id: e._id,
          error: String(err),
        });
      })
      .finally(() => {
        // A full replica refills at once rather than at the next poll.
        if (this.inFlight.size >= this.options.concurrency) this.wake();
        this.inFlight.delete(e._id);
        slot.count -= 1;
        if (slot.count <= 0) this.perEndpoint.delete(ek);
      });
    this.inFlight.set(e._id, run);
  }
}

function claimKey(e: EventDoc): string {
  return `${e._id}:${e.attempts_made + 1}`;
}

function endpointKey(e: EventDoc): string {
  return `${e.account_id}:${e.environment}`;
}
