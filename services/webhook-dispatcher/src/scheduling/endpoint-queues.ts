import type { PendingDoc } from '../domain/stored-event.js';

/** One attempt to run: a pending event, as read or stored. */
export interface DeliveryJob {
  doc: PendingDoc;
  /** Read from an overdue document: its claim's holder may have died, so a lost claim is looked at. */
  suspect: boolean;
}

/** Events queued here for one endpoint at most; beyond, they wait in the database for their hand-off time. */
const MAX_QUEUED_PER_ENDPOINT = 5000;

type EndpointOf = Pick<PendingDoc, 'account_id' | 'environment'>;

/** An account environment has one endpoint: deliveries are queued and limited per account environment. */
function endpointKey(e: EndpointOf): string {
  return `${e.account_id}:${e.environment}`;
}

/**
 * The deliveries waiting to start, one queue per endpoint, served round robin, with at most
 * `endpointConcurrency` of an endpoint's deliveries in flight: a slow endpoint fills only its own
 * queue, and never holds up another's.
 */
export class EndpointQueues {
  private readonly queues = new Map<string, DeliveryJob[]>();
  /** The endpoints with jobs queued, each once, in turn order. */
  private turns: string[] = [];
  /** Endpoint → its jobs taken and not done yet. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly endpointConcurrency: number,
    private readonly maxQueued = MAX_QUEUED_PER_ENDPOINT,
  ) {}

  /** Queues a job; false (and nothing queued) when its endpoint's queue is full. */
  add(job: DeliveryJob): boolean {
    const key = endpointKey(job.doc);
    const q = this.queues.get(key);
    if (q && q.length >= this.maxQueued) return false;
    if (q) q.push(job);
    else {
      this.queues.set(key, [job]);
      this.turns.push(key);
    }
    return true;
  }

  /** The next job, round robin over the endpoints below their limit (it counts as in flight until `done`); undefined when none can start. */
  take(): DeliveryJob | undefined {
    let skipped = 0;
    while (this.turns.length > skipped) {
      const key = this.turns.shift() as string;
      const q = this.queues.get(key);
      if (!q || q.length === 0) {
        this.queues.delete(key);
        continue;
      }
      if (this.atLimit(key)) {
        this.turns.push(key);
        skipped += 1;
        continue;
      }
      const job = q.shift() as DeliveryJob;
      if (q.length > 0) this.turns.push(key);
      else this.queues.delete(key);
      this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
      return job;
    }
    return undefined;
  }

  /** A job taken has finished: its endpoint has room for one more. */
  done(doc: EndpointOf): void {
    const key = endpointKey(doc);
    const left = (this.inFlight.get(key) ?? 1) - 1;
    if (left > 0) this.inFlight.set(key, left);
    else this.inFlight.delete(key);
  }

  /** Jobs queued for endpoints below their limit: those that could start now. */
  startable(): number {
    let n = 0;
    for (const [key, q] of this.queues) if (!this.atLimit(key)) n += q.length;
    return n;
  }

  /**
   * The endpoint has work enough here (in flight at its limit, or as many queued as it may run
   * at once): more of its events should wait in the database, not in memory.
   */
  isBusy(e: EndpointOf): boolean {
    const key = endpointKey(e);
    return this.atLimit(key) || (this.queues.get(key)?.length ?? 0) >= this.endpointConcurrency;
  }

  private atLimit(key: string): boolean {
    return (this.inFlight.get(key) ?? 0) >= this.endpointConcurrency;
  }
}
