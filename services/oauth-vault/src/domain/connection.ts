import { createHash } from 'node:crypto';
import type { Environment } from '@tes/contracts';

export type ConnectionStatus = 'connected' | 'broken' | 'revoked';

/** Whose connection: tokens are isolated per (account, environment, user, service). */
export interface ConnectionKey {
  account_id: string;
  environment: Environment;
  user_id: string;
  service: string;
}

/**
 * One user's connection to one service. Tokens are sealed with the key ring (never stored
 * raw); `generation` counts writes: every write is made by the holder of the lease on the next
 * generation, so two writers never overwrite each other (FerretDB has no atomic updates).
 */
export interface ConnectionDoc extends ConnectionKey {
  _id: string;
  generation: number;
  status: ConnectionStatus;
  scopes: string[];
  access_token_enc: string | null;
  refresh_token_enc: string | null;
  /** Key id both sealed tokens are written with (re-encryption finds old ones by it). */
  key_id: string | null;
  token_type: string | null;
  /** When the access token expires; null: the provider did not say (it does not expire). */
  expires_at: Date | null;
  /** The access token's lifetime as issued (`expires_in`): refresh margins are capped at half of it. */
  lifetime_s: number | null;
  /** First connection, kept across re-authorizations. */
  created_at: Date;
  /** Last completed consent: the `connected_at` of the public view. */
  authorized_at: Date;
  refreshed_at: Date | null;
  /** When the background sweep refreshes it; null: nothing to refresh. */
  next_refresh_at: Date | null;
  /** When the health probe looks at it next; null: not probed. */
  next_probe_at: Date | null;
  last_probe_at: Date | null;
  broken_at: Date | null;
  broken_reason: string | null;
  revoked_at: Date | null;
  /** The connection.changed event (outbox id) announcing the last authorization or revocation. */
  last_event_id: string | null;
  updated_at: Date;
}

/** Stable id of a connection: a hash, so user ids of any shape make a short, safe `_id`. */
export function connectionIdOf(key: ConnectionKey): string {
  const h = createHash('sha256')
    .update(JSON.stringify([key.account_id, key.environment, key.user_id, key.service]))
    .digest('base64url');
  return `conn_${h.slice(0, 32)}`;
}

export interface Mutation {
  /** Cheap check on the latest document, without the lease: is a write still wanted? */
  needed(doc: ConnectionDoc | null): boolean;
  /**
   * Runs under the lease of the next generation, on the latest document: the new document,
   * or null to change nothing. May call the provider (a refresh): the lease makes it the only one.
   */
  apply(doc: ConnectionDoc | null): Promise<Omit<ConnectionDoc, 'generation'> | null>;
}

export interface MutationResult {
  doc: ConnectionDoc | null;
  /** This call wrote the document. */
  changed: boolean;
}

/** The connections, as the use cases and the sweep read and change them (store/connection.repository.ts). */
export interface ConnectionStore {
  find(id: string): Promise<ConnectionDoc | null>;
  listFor(accountId: string, environment: Environment, userId: string): Promise<ConnectionDoc[]>;
  /** Deletes every user's connection to a service of an account's environment (its provider is gone). */
  deleteForService(accountId: string, environment: Environment, service: string): Promise<number>;
  dueForRefresh(now: Date, limit: number): Promise<ConnectionDoc[]>;
  dueForProbe(now: Date, limit: number): Promise<ConnectionDoc[]>;
  /** The one way a connection changes: at most one writer per generation, across replicas. */
  mutate(id: string, kind: string, m: Mutation): Promise<MutationResult>;
}
