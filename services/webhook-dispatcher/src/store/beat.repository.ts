import { Schema, type Connection } from 'mongoose';

/**
 * One document per dispatcher process, `_id` = its holder name, written by that process only
 * (one writer): a counter it raises every heartbeat, and `stopped` once it has shut down cleanly.
 * Others read the counters to tell a live holder of claims and fast-lane events from a dead one
 * (HolderLiveness); no clock is compared across processes.
 */
export interface BeatDoc {
  _id: string;
  beat: number;
  stopped: boolean;
  at: Date;
}

const beatSchema = new Schema<BeatDoc>({ _id: String, beat: Number, stopped: Boolean, at: Date }, { versionKey: false });

/** The `dispatcher_beats` collection (see BeatDoc): small, one document per process ever started. */
export class BeatRepository {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<BeatDoc>('DispatcherBeat', beatSchema, 'dispatcher_beats');
  }

  /** Writes this process's beat (its own document only). */
  async beat(holder: string, beat: number, stopped = false): Promise<void> {
    await this.model.collection.updateOne({ _id: holder } as never, { $set: { beat, stopped, at: new Date() } }, { upsert: true });
  }

  async all(): Promise<BeatDoc[]> {
    return this.model.collection.find<BeatDoc>({}).toArray();
  }
}
