import { Schema, type Connection } from 'mongoose';
import type { Environment, ToolView } from '@tes/contracts';
import type { ToolStore } from '../domain/ports.js';

/** A custom tool of one account's environment, as registered (never a client secret: the vault keeps it). */
export interface ToolDoc {
  _id: string;
  account_id: string;
  environment: Environment;
  name: string;
  tool: ToolView;
}

const toolSchema = new Schema<ToolDoc>(
  { _id: String, account_id: String, environment: String, name: String },
  { versionKey: false, strict: false },
);
toolSchema.index({ account_id: 1, environment: 1, name: 1 });

/** Written only by the partition consumer of the tool's account, like tasks: no concurrent writers. */
export class ToolRepository implements ToolStore {
  private readonly model;

  constructor(conn: Connection) {
    this.model = conn.model<ToolDoc>('Tool', toolSchema, 'custom_tools');
  }

  /** Creates or replaces (a replaced tool keeps its created_at); answers the stored tool and whether it is new. */
  async put(accountId: string, environment: Environment, tool: ToolView): Promise<{ tool: ToolView; created: boolean }> {
    const _id = `${accountId}:${environment}:${tool.name}`;
    const existing = await this.model.findById(_id, { 'tool.created_at': 1 }).lean<Pick<ToolDoc, 'tool'>>().exec();
    const stored = existing ? { ...tool, created_at: existing.tool.created_at } : tool;
    const doc: ToolDoc = { _id, account_id: accountId, environment, name: tool.name, tool: stored };
    await this.model.collection.replaceOne({ _id } as never, doc, { upsert: true });
    return { tool: stored, created: !existing };
  }

  async list(accountId: string, environment: Environment): Promise<ToolView[]> {
    const docs = await this.model.find({ account_id: accountId, environment }).sort({ name: 1 }).lean<ToolDoc[]>().exec();
    return docs.map((d) => d.tool);
  }

  /** False when there was no such tool. */
  async delete(accountId: string, environment: Environment, name: string): Promise<boolean> {
    const r = await this.model.collection.deleteOne({ _id: `${accountId}:${environment}:${name}` } as never);
    return r.deletedCount > 0;
  }
}
