import { Schema, type Connection } from 'mongoose';
import { isDuplicateKey } from '@tes/store';
import type { StepRunDoc, StepRunStore } from '../domain/step-run.js';

const stepRunSchema = new Schema<StepRunDoc>(
  {
    _id: String,
    task_id: { type: String, required: true },
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    step_index: { type: Number, required: true },
    tool: String,
    action: String,
    result: Schema.Types.Mixed,
    trace: Schema.Types.Mixed,
    finished_at: Date,
  },
  { versionKey: false },
);
stepRunSchema.index({ task_id: 1, step_index: 1 });

export class StepRunRepository implements StepRunStore {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<StepRunDoc>('StepRun', stepRunSchema, 'step_runs');
  }

  async find(id: string): Promise<StepRunDoc | null> {
    return this.model.collection.findOne({ _id: id } as never) as Promise<StepRunDoc | null>;
  }

  /** Records a finished step once; a second record of the same step keeps the first. */
  async record(doc: StepRunDoc): Promise<StepRunDoc> {
    try {
      await this.model.collection.insertOne(doc as never);
      return doc;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const existing = await this.find(doc._id);
      if (!existing) throw err;
      return existing;
    }
  }

  /** Outputs of a task's completed steps, by step index (for `{{steps.N.output}}` references). */
  async outputsOf(
    taskId: string,
    accountId: string,
    environment: string,
    indexes: number[],
  ): Promise<Map<number, Record<string, unknown>>> {
    const docs = await this.model
      .find({ task_id: taskId, account_id: accountId, environment, step_index: { $in: indexes } })
      .lean<StepRunDoc[]>()
      .exec();
    const out = new Map<number, Record<string, unknown>>();
    for (const d of docs) if (d.result.outcome === 'complete') out.set(d.step_index, d.result.output ?? {});
    return out;
  }

  async traceOf(taskId: string, accountId: string, environment: string): Promise<StepRunDoc[]> {
    return this.model.find({ task_id: taskId, account_id: accountId, environment }).sort({ step_index: 1 }).lean<StepRunDoc[]>().exec();
  }
}
