import { Schema, type Connection } from 'mongoose';
import { isDuplicateKey } from '@tes/store';
import type { SandboxDoc, SandboxStore } from '../domain/sandbox.js';

const sandboxSchema = new Schema<SandboxDoc>(
  {
    _id: String,
    scope: { type: String, required: true },
    kind: { type: String, required: true },
    container: String,
    seq: Number,
    data: Schema.Types.Mixed,
    created_at: Date,
  },
  { versionKey: false },
);
sandboxSchema.index({ scope: 1, kind: 1, container: 1, seq: -1 });

const COUNTER = 'counter';

/**
 * State of the simulated providers used with test keys: one world per account, user
 * and service (`scope`). Objects a step creates are keyed by the step's idempotency key,
 * so a step run twice (crash, redelivery) creates its object once. Sequence numbers
 * (issue #1, #2 …) are claimed by inserting a counter document: no read-then-write.
 */
export class SandboxRepository implements SandboxStore {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<SandboxDoc>('SandboxObject', sandboxSchema, 'sandbox_objects');
  }

  /**
   * Creates an object once per idempotency key: the first call makes it with the next
   * sequence number of its container; later calls with the same key answer the same object.
   */
  async createOnce(
    scope: string,
    kind: string,
    container: string,
    idempotencyKey: string,
    make: (seq: number) => Record<string, unknown>,
  ): Promise<SandboxDoc> {
    const id = `${scope}|${kind}|${idempotencyKey}`;
    const existing = await this.model.findById(id).lean<SandboxDoc>().exec();
    if (existing) return existing;
    const seq = await this.nextSeq(scope, kind, container);
    const doc: SandboxDoc = { _id: id, scope, kind, container, seq, data: make(seq), created_at: new Date() };
    try {
      await this.model.collection.insertOne(doc as never);
      return doc;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const winner = await this.model.findById(id).lean<SandboxDoc>().exec();
      if (!winner) throw err;
      return winner;
    }
  }

  private async nextSeq(scope: string, kind: string, container: string): Promise<number> {
    let n = (await this.model.countDocuments({ scope, kind: `${COUNTER}:${kind}`, container }).exec()) + 1;
    for (;;) {
      try {
        await this.model.collection.insertOne({
          _id: `${scope}|${COUNTER}|${kind}|${container}|${n}`,
          scope,
          kind: `${COUNTER}:${kind}`,
          container,
          seq: n,
          data: {},
          created_at: new Date(),
        } as never);
        return n;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        n += 1;
      }
    }
  }

  /** Objects of a kind, newest first; `container` undefined means all containers. */
  async list(scope: string, kind: string, container?: string, limit = 1000): Promise<SandboxDoc[]> {
    return this.model
      .find({ scope, kind, ...(container !== undefined ? { container } : {}) })
      .sort({ seq: -1, created_at: -1 })
      .limit(limit)
      .lean<SandboxDoc[]>()
      .exec();
  }

  async findBySeq(scope: string, kind: string, container: string, seq: number): Promise<SandboxDoc | null> {
    return this.model.findOne({ scope, kind, container, seq }).lean<SandboxDoc>().exec();
  }

  async containers(scope: string, kind: string): Promise<string[]> {
    const docs = await this.model.find({ scope, kind }, { container: 1 }).lean<Pick<SandboxDoc, 'container'>[]>().exec();
    return [...new Set(docs.map((d) => d.container))];
  }

  /** Replaces an object's data (the sandbox's own, single-field updates such as labels). */
  async setData(id: string, data: Record<string, unknown>): Promise<void> {
    await this.model.collection.updateOne({ _id: id } as never, { $set: { data } });
  }
}
