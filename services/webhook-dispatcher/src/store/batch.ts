import type { mongo } from 'mongoose';
import type { InsertOutcome } from '../domain/ports.js';

type Collection = mongo.Collection;
type Document = mongo.Document;

interface Pending<T, R> {
  item: T;
  resolve(r: R): void;
  reject(err: unknown): void;
}

/**
 * Turns many small writes into few round trips: every `add` made while a write is under way
 * joins the next one. A lone add goes at once (on the next turn of the event loop), so a quiet
 * dispatcher pays no latency for it; a busy one sends batches of up to `maxBatch`. At most
 * `maxConcurrent` writes are in flight, which also bounds what one replica asks of the database.
 */
export class Batcher<T, R> {
  private queue: Pending<T, R>[] = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly write: (items: T[]) => Promise<(R | Error)[]>,
    private readonly options: { maxBatch: number; maxConcurrent: number },
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.running < this.options.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.running += 1;
      void this.flush(batch).finally(() => {
        this.running -= 1;
        this.pump();
      });
    }
  }

  private async flush(batch: Pending<T, R>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((p) => p.item));
      batch.forEach((p, i) => {
        const r = results[i];
        if (r instanceof Error) p.reject(r);
        else p.resolve(r as R);
      });
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  }
}

/**
 * One unordered insertMany; each document's fate: inserted, duplicate (another insert of its
 * `_id` won, which is how claims and dedup are decided), or its own write error. Throws when the
 * fate of some document is unknown: the driver reports a connection lost during the write as a
 * bulk write error with no document errors (and whatever it counted so far), which is not
 * "all inserted"; the caller retries the batch, and the duplicates tell what had been written.
 */
export async function insertEach(collection: Collection, docs: readonly Document[]): Promise<(InsertOutcome | Error)[]> {
  if (docs.length === 0) return [];
  const out: (InsertOutcome | Error)[] = docs.map(() => 'inserted');
  try {
    await collection.insertMany(docs, { ordered: false });
  } catch (err) {
    const raw = (err as { writeErrors?: unknown }).writeErrors;
    const writeErrors = (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw]) as { index: number; code?: number; errmsg?: string }[];
    const inserted = (err as { result?: { insertedCount?: number } }).result?.insertedCount;
    if (writeErrors.length === 0 || inserted === undefined || inserted + writeErrors.length !== docs.length) throw err;
    for (const w of writeErrors) out[w.index] = w.code === 11000 ? 'duplicate' : new Error(w.errmsg ?? `insert failed (code ${w.code})`);
  }
  return out;
}

/** A batcher of inserts into one collection (documents with a string `_id`). */
export function insertBatcher<T extends { _id: string }>(
  collection: () => Collection,
  options = { maxBatch: 500, maxConcurrent: 2 },
): Batcher<T, InsertOutcome> {
  return new Batcher<T, InsertOutcome>((docs) => insertEach(collection(), docs), options);
}

/** At most `max` of the given calls at once (FerretDB v1 holds two connections per update). */
export class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    // A finishing call hands its slot straight to the next waiter.
    if (this.active >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    else this.active += 1;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
