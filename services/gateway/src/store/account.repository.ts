import { Schema, type Connection } from 'mongoose';
import type { Environment } from '@tes/contracts';
import type { Plan } from '../domain/plans.js';

export interface AccountDoc {
  _id: string;
  name: string;
  plan: Plan;
  status: 'active' | 'disabled';
  /** Overrides of the plan's limits (enterprise). */
  limits?: { requests_per_minute?: number; concurrent_tasks?: number };
  created_at: Date;
}

export interface ApiKeyDoc {
  _id: string;
  account_id: string;
  environment: Environment;
  hash: string;
  prefix: string;
  last4: string;
  status: 'active' | 'revoked';
  created_at: Date;
  revoked_at?: Date;
}

const accountSchema = new Schema<AccountDoc>(
  { _id: String, name: String, plan: String, status: String, limits: Schema.Types.Mixed, created_at: Date },
  { versionKey: false },
);
const apiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: String,
    account_id: String,
    environment: String,
    hash: String,
    prefix: String,
    last4: String,
    status: String,
    created_at: Date,
    revoked_at: Date,
  },
  { versionKey: false },
);
apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ account_id: 1 });

export class AccountRepository {
  readonly accounts;
  readonly keys;

  constructor(conn: Connection) {
    this.accounts = conn.model<AccountDoc>('Account', accountSchema, 'accounts');
    this.keys = conn.model<ApiKeyDoc>('ApiKey', apiKeySchema, 'api_keys');
  }

  async keyByHash(hash: string): Promise<ApiKeyDoc | null> {
    return this.keys.findOne({ hash }).lean<ApiKeyDoc>().exec();
  }

  async account(id: string): Promise<AccountDoc | null> {
    return this.accounts.findById(id).lean<AccountDoc>().exec();
  }
}
