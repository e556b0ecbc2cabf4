import type { Environment } from '@tes/contracts';
import type { ConnectionKey } from './connection.js';

/**
 * What an `auth_url` stands for: a user is asked to connect a service with these scopes
 * (the union of what they granted and what a task needs). Written once, never updated.
 */
export interface PendingAuthorizationDoc extends ConnectionKey {
  _id: string;
  scopes: string[];
  /** The task that first needed it (for the operator; any task of the user resumes). */
  task_id: string;
  created_at: Date;
  expires_at: Date;
}

/**
 * One consent attempt, made when the browser opens the `auth_url`: the PKCE verifier (sealed)
 * that the state's `jti` refers to. Written once, read once by the callback.
 */
export interface AuthAttemptDoc {
  _id: string;
  pending_id: string;
  code_verifier_enc: string | null;
  created_at: Date;
  expires_at: Date;
}

/** Pending authorizations and their consent attempts (store/pending-authorization.repository.ts). */
export interface PendingAuthorizationStore {
  create(doc: PendingAuthorizationDoc): Promise<void>;
  find(id: string): Promise<PendingAuthorizationDoc | null>;
  /** A used link is gone (the sandbox consent page makes links single-use). */
  delete(id: string): Promise<void>;
  /** A still-valid pending authorization for exactly these scopes (so a user sees one link, not one per task). */
  findReusable(key: ConnectionKey, scopes: string[], validAfter: Date): Promise<PendingAuthorizationDoc | null>;
  /** Deletes the pending authorizations (and their consent attempts) of a service of an account's environment. */
  deleteForService(accountId: string, environment: Environment, service: string): Promise<number>;
  createAttempt(doc: AuthAttemptDoc): Promise<void>;
  findAttempt(id: string): Promise<AuthAttemptDoc | null>;
  /** Removes expired pending authorizations and attempts. */
  purgeExpired(now: Date): Promise<void>;
}
