import { attemptDelivery, type AttemptOutcome, type DeliverDeps } from '../domain/deliver-event.use-case.js';
import { isLastOfTask, type PendingDoc, type Stored } from '../domain/stored-event.js';
import { DeliveryPoller } from '../jobs/delivery-poller.js';
import { EndpointQueues, type DeliveryJob } from './endpoint-queues.js';
import { FastLane, type DeliveryQueue } from './fast-lane.js';
import type { HolderLiveness } from './holder-liveness.js';
import { TaskOrdering } from './task-ordering.js';

export interface SchedulerOptions {
  pollIntervalMs: number;
  /** Deliveries in flight in this replica. */
  concurrency: number;
  /** Deliveries in flight in this replica to one account environment. */
  endpointConcurrency: number;
  /** How long an event waits for its predecessor version before it goes anyway. */
  orderGapWaitMs: number;
}

/**
 * Runs the deliveries of one replica. Two lanes feed per-endpoint queues (EndpointQueues):
 * the fast lane (FastLane: the events this replica stored, delivered at once) and the poller
 * (DeliveryPoller: retries, redeliveries, abandoned events), both keeping each task's events in
 * version order (TaskOrdering). The queues are served round robin, at most DELIVERY_CONCURRENCY
 * in flight and ENDPOINT_CONCURRENCY per account environment. Delays live in the database, never
 * in timers: any replica picks up any due attempt, and a restart loses none.
 */
export class DeliveryScheduler implements DeliveryQueue {
  private running = false;
  readonly inHand = new Set<string>();
  private readonly queues: EndpointQueues;
  private readonly fastLane: FastLane;
  private readonly poller: DeliveryPoller;
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Outcomes recorded, their final writes under way (they do not hold a delivery slot). */
  private readonly finishing = new Set<Promise<void>>();
  private roomWaiters: (() => void)[] = [];

  constructor(
    private readonly deps: DeliverDeps,
    private readonly options: SchedulerOptions,
    /** The holders' heartbeats: what a dead replica held is taken over once it is found gone. */
    liveness?: Pick<HolderLiveness, 'isGone' | 'onGone'>,
  ) {
    this.queues = new EndpointQueues(options.endpointConcurrency);
    const ordering = new TaskOrdering(deps, options);
    this.fastLane = new FastLane(ordering, this, options);
    const parts = { queue: this, queues: this.queues, ordering, fastLane: this.fastLane };
    this.poller = new DeliveryPoller(deps, options, parts, liveness?.isGone);
    liveness?.onGone((holder) => {
      if (!this.running) return;
      this.poller
        .holderGone(holder)
        .catch((err: unknown) =>
          this.deps.logger.warn('looking up what a gone dispatcher held failed; its lease still ends it', { error: String(err) }),
        );
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.poller.start();
  }

  /** Look again now (an open-lane event was stored: redeliver, test event). */
  wake(): void {
    this.poller.wake();
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

  /** Stops polling and waits up to `timeoutMs` for the deliveries in flight; the queued ones stay for whoever comes next. */
  async stop(timeoutMs: number): Promise<void> {
    this.running = false;
    const polling = this.poller.stop();
    this.releaseRoom();
    await polling;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.inFlight.values()]), timeout]);
    await Promise.race([Promise.allSettled([...this.finishing]), timeout]);
    clearTimeout(timer);
  }

  /** Takes what the consumer just stored, in queue order (see FastLane.accept). */
  accept(stored: readonly Stored[]): void {
    this.fastLane.accept(stored);
    this.pump();
    if (this.fastLane.waiting > 0) this.wake();
  }

  runnable(): number {
    return this.inFlight.size + this.queues.startable();
  }

  enqueue(job: DeliveryJob): void {
    if (this.queues.add(job)) return;
    // Its endpoint's queue is full: the event is left to the database (pollers take it at its hand-off time).
    this.inHand.delete(job.doc.event_id);
    this.poller.forget(job.doc.event_id);
    this.fastLane.handOver(job.doc);
  }

  /** Starts queued deliveries: round robin over endpoints, within both limits. */
  pump(): void {
    // Final writes lagging far behind the deliveries: let the database catch up first.
    const backlog = this.finishing.size >= this.options.concurrency * 4;
    while (this.running && !backlog && this.inFlight.size < this.options.concurrency) {
      const job = this.queues.take();
      if (!job) break;
      this.launch(job);
    }
    this.releaseRoom();
  }

  private hasRoom(): boolean {
    return !this.running || this.runnable() < this.options.concurrency * 4;
  }

  private releaseRoom(): void {
    if (!this.hasRoom()) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }

  private launch(job: DeliveryJob): void {
    const { doc } = job;
    const run = attemptDelivery(doc, this.deps, { suspect: job.suspect })
      .then((outcome) => this.settled(job, outcome))
      .catch((err: unknown) => {
        this.deps.logger.warn('delivery attempt failed to run; it will be retried after its claim expires', {
          event_id: doc.event_id,
          error: String(err),
        });
        this.settled(job, { kind: 'stale' });
      })
      .finally(() => {
        this.inFlight.delete(doc.event_id);
        this.queues.done(doc);
        this.pump();
      });
    this.inFlight.set(doc.event_id, run);
  }

  private settled({ doc }: DeliveryJob, outcome: AttemptOutcome): void {
    this.poller.settled(doc, outcome);
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
          this.inHand.delete(doc.event_id);
          if (outcome.terminal && this.fastLane.predecessorGone(doc.task_id)) this.wake();
          this.pump();
        });
      this.finishing.add(writes);
    } else {
      this.inHand.delete(doc.event_id);
    }
    const terminal = outcome.kind === 'done' && outcome.terminal;
    if (!this.fastLane.settled(doc, terminal) && terminal) this.chase(doc);
  }

  /**
   * A task's event is done (its outcome recorded) and no follower of it is known here: unless its
   * followers wait in the checks (they go once its pending document is gone), they are looked up
   * now (FastLane.chase), so they follow at once, whoever stored them. A task's last event has none.
   */
  private chase(doc: PendingDoc): void {
    if (!this.running || isLastOfTask(doc.kind) || this.fastLane.checking(doc.task_id)) return;
    this.fastLane.chase(doc).catch((err: unknown) =>
      this.deps.logger.warn('looking up the next events of a task failed; the poller finds them', {
        task_id: doc.task_id,
        error: String(err),
      }),
    );
  }
}
