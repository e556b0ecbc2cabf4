import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import type { EndpointDoc } from '../domain/endpoint.js';
import type { EndpointStore } from '../domain/ports.js';

const endpointSchema = new Schema<EndpointDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    environment: { type: String, required: true },
    url: { type: String, required: true },
    created_at: Date,
    updated_at: Date,
  },
  { versionKey: false },
);
endpointSchema.index({ account_id: 1, environment: 1 });

export function endpointId(accountId: string, environment: Environment): string {
  return `${accountId}:${environment}`;
}

export type ChangeListener = (accountId: string, environment: Environment) => void;

/**
 * Written by the operator (CLI) and the dashboard (`webhook.set`); read at every delivery through
 * the dispatcher's short-lived cache (ConfigCache), which a write made by this process clears
 * at once (`onChange`).
 */
export class EndpointRepository implements EndpointStore {
  private readonly model;
  private readonly listeners: ChangeListener[] = [];

  constructor(conn: Connection) {
    this.model = conn.model<EndpointDoc>('Endpoint', endpointSchema, 'endpoints');
  }

  onChange(listener: ChangeListener): void {
    this.listeners.push(listener);
  }

  async get(accountId: string, environment: Environment): Promise<EndpointDoc | null> {
    return this.model.findById(endpointId(accountId, environment)).lean<EndpointDoc>().exec();
  }

  async set(accountId: string, environment: Environment, url: string, now = new Date()): Promise<EndpointDoc> {
    const _id = endpointId(accountId, environment);
    const existing = await this.get(accountId, environment);
    const doc: EndpointDoc = { _id, account_id: accountId, environment, url, created_at: existing?.created_at ?? now, updated_at: now };
    await this.model.collection.replaceOne({ _id } as never, doc, { upsert: true });
    for (const l of this.listeners) l(accountId, environment);
    return doc;
  }
}
