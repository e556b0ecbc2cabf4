import { Schema, type Connection } from 'mongoose';
import { highestClaimed, resetOf, retryAfterSeconds, windowOf } from '../domain/rate-window.js';

/**
 * Requests per minute per account, exact across gateway replicas, on FerretDB v1
 * (no locks on updates, so no counter document and no `$inc`).
 *
 * One admitted request holds one ticket `{_id: "<account>:<window>:<n>"}`, 1 ≤ n ≤ limit.
 * Tickets are claimed by inserts into the unique `_id`: one insert wins, so at most
 * `limit` requests are admitted per window, whatever the number of replicas.
 * Tickets are claimed from the bottom up, each round starting right above the highest
 * ticket known claimed, so refusing (ticket `limit` is taken) means the window is
 * full: the limit is exact, and a refused request writes nothing.
 *
 * Within one process, concurrent requests of one account wait in a queue and are
 * served in batches (one unordered insertMany of consecutive tickets per round), so
 * a burst costs a few round trips instead of a stampede on the same ticket. Across
 * replicas, rounds that lose some tickets to another replica jump to the new top with
 * a logarithmic probe (findOne by _id) and try again; each process remembers how far
 * the others got ahead between its batches and checks that guess with one read first.
 * Measured on FerretDB v1 (services/gateway/bench/rate-limit.ts): 1 command per request on one
 * replica, about 2 with requests alternating over three, a fraction in bursts.
 */
export interface RateTicketDoc {
  _id: string;
  account_id: string;
  window: number;
  n: number;
}

export interface RateDecision {
  admitted: boolean;
  limit: number;
  /** Tickets left in the window after this request. */
  remaining: number;
  /** Unix seconds at which the window ends. */
  reset: number;
  /** Seconds to wait when refused. */
  retryAfter: number;
}

const schema = new Schema<RateTicketDoc>({ _id: String, account_id: String, window: Number, n: Number }, { versionKey: false });
schema.index({ window: 1 });

/** Rounds a batch may lose before its remaining requests are refused (early, never over the limit). */
const MAX_ROUNDS = 64;
const MAX_BATCH = 256;
/** Beyond this many ended windows since the last sweep (a long pause, a clock jump), one range delete. */
const MAX_WINDOWS_PER_SWEEP = 60;

interface Waiter {
  limit: number;
  nowMs: number;
  resolve(d: RateDecision): void;
  reject(err: unknown): void;
}

export class RateLimitRepository {
  private readonly model;
  /** Highest ticket this process knows claimed, per account:window. Only a starting point. */
  private readonly top = new Map<string, number>();
  /** How far other replicas got ahead between two batches of ours, per account:window. */
  private readonly ahead = new Map<string, number>();
  private topWindow = -1;
  /** Windows below this one were swept by this process; undefined before its first sweep. */
  private sweptBelow: number | undefined;
  private readonly queues = new Map<string, Waiter[]>();

  constructor(conn: Connection) {
    this.model = conn.model<RateTicketDoc>('RateTicket', schema, 'rate_tickets');
  }

  acquire(accountId: string, limit: number, nowMs = Date.now()): Promise<RateDecision> {
    const window = windowOf(nowMs);
    if (window > this.topWindow) {
      this.top.clear();
      this.ahead.clear();
      this.topWindow = window;
    }
    const base = `${accountId}:${window}`;
    return new Promise<RateDecision>((resolve, reject) => {
      const waiter: Waiter = { limit, nowMs, resolve, reject };
      const queue = this.queues.get(base);
      if (queue) {
        queue.push(waiter);
        return;
      }
      const fresh = [waiter];
      this.queues.set(base, fresh);
      void this.lead(base, accountId, window, fresh);
    });
  }

  /**
   * Deletes the tickets of windows before `beforeWindow` (no TTL index on FerretDB). A range
   * delete makes FerretDB v1 read every ticket (it pushes only equalities down to PostgreSQL), so
   * it runs once per process, for whatever older windows exist; after that each window that ended
   * is deleted by equality, which an index answers.
   */
  async sweep(beforeWindow: number): Promise<number> {
    const from = this.sweptBelow;
    if (from === undefined || beforeWindow - from > MAX_WINDOWS_PER_SWEEP) {
      const res = await this.model.collection.deleteMany({ window: { $lt: beforeWindow } });
      this.sweptBelow = beforeWindow;
      return res.deletedCount;
    }
    let deleted = 0;
    for (let window = from; window < beforeWindow; window++) {
      deleted += (await this.model.collection.deleteMany({ window })).deletedCount;
      this.sweptBelow = window + 1;
    }
    return deleted;
  }

  /** Serves the account's queue until it is empty, one batch (same limit) at a time. */
  private async lead(base: string, accountId: string, window: number, queue: Waiter[]): Promise<void> {
    try {
      while (queue.length > 0) {
        const limit = queue[0]!.limit;
        let size = 0;
        while (size < queue.length && size < MAX_BATCH && queue[size]!.limit === limit) size++;
        const batch = queue.splice(0, size);
        try {
          await this.serve(batch, base, accountId, window, limit);
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.queues.delete(base);
    }
  }

  private async serve(batch: Waiter[], base: string, accountId: string, window: number, limit: number): Promise<void> {
    const decide = (w: Waiter, n: number | undefined): void =>
      w.resolve({
        admitted: n !== undefined,
        limit,
        remaining: n === undefined ? 0 : Math.max(0, limit - n),
        reset: resetOf(window),
        retryAfter: retryAfterSeconds(w.nowMs, window),
      });
    let pending = batch;
    const startTop = this.top.get(base) ?? 0;
    // Other replicas serving the same account moved on by about `lead` tickets since our
    // last batch: one read confirms it, and the insert then starts right above it.
    const lead = this.ahead.get(base) ?? 0;
    if (lead > 0 && startTop < limit) {
      const probe = Math.min(startTop + lead, limit);
      if (await this.exists(`${base}:${probe}`)) this.note(base, probe);
      else this.ahead.set(base, Math.floor(lead / 2));
    }
    for (let round = 0; round < MAX_ROUNDS && pending.length > 0; round++) {
      const from = (this.top.get(base) ?? 0) + 1;
      const to = Math.min(from + pending.length - 1, limit);
      if (from > to) break;
      const { won, lost } = await this.insertTickets(base, accountId, window, from, to);
      won.forEach((n, i) => decide(pending[i]!, n));
      pending = pending.slice(won.length);
      // Every ticket from..to is now held by someone; if others hold some, they may be further on.
      const known = lost ? await highestClaimed(to, limit, (k) => this.exists(`${base}:${k}`)) : to;
      this.note(base, known);
      if (lost) this.ahead.set(base, Math.max(0, known - startTop - batch.length + pending.length));
    }
    for (const w of pending) decide(w, undefined);
  }

  /** One unordered insertMany of tickets from..to; returns the ones this call won, ascending. */
  private async insertTickets(
    base: string,
    accountId: string,
    window: number,
    from: number,
    to: number,
  ): Promise<{ won: number[]; lost: boolean }> {
    const docs: RateTicketDoc[] = [];
    for (let n = from; n <= to; n++) docs.push({ _id: `${base}:${n}`, account_id: accountId, window, n });
    try {
      await this.model.collection.insertMany(docs as never[], { ordered: false });
      return { won: docs.map((d) => d.n), lost: false };
    } catch (err) {
      const raw = (err as { writeErrors?: unknown }).writeErrors;
      const errors = (Array.isArray(raw) ? raw : raw ? [raw] : []) as { index: number; code: number }[];
      if (errors.length === 0 || errors.some((e) => e.code !== 11000)) throw err;
      const lostIdx = new Set(errors.map((e) => e.index));
      return { won: docs.filter((_, i) => !lostIdx.has(i)).map((d) => d.n), lost: true };
    }
  }

  private async exists(id: string): Promise<boolean> {
    return (await this.model.collection.findOne({ _id: id } as never, { projection: { _id: 1 } })) !== null;
  }

  private note(base: string, n: number): void {
    if (n > (this.top.get(base) ?? 0)) this.top.set(base, n);
  }
}
