import type { Environment } from '@tes/contracts';

/** The one webhook endpoint of an account environment (spec 6). `_id` = `${account_id}:${environment}`. */
export interface EndpointDoc {
  _id: string;
  account_id: string;
  environment: Environment;
  url: string;
  created_at: Date;
  updated_at: Date;
}
