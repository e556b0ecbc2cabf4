import type { ConnectionKey } from './connection.js';

/** Whose custom provider: a custom tool belongs to one account and one environment. */
export type ProviderScope = Pick<ConnectionKey, 'account_id' | 'environment'>;

/**
 * The OAuth client of a custom tool (provider.register), one per (account, environment,
 * service). The client secret is sealed with the key ring (never stored raw); everything else
 * is as registered, the defaults applied.
 */
export interface CustomProviderDoc extends ProviderScope {
  /** `<account_id>:<environment>:<service>`. */
  _id: string;
  service: string;
  display_name: string;
  authorize_url: string;
  token_url: string;
  /** null: no revocation endpoint (revoking only deletes the tokens here). */
  revocation_url: string | null;
  /** Default scopes, normalized. */
  scopes: string[];
  client_id: string;
  client_secret_enc: string;
  /** Key id the secret is sealed with (re-encryption finds old ones by it). */
  key_id: string;
  pkce: boolean;
  token_auth: 'basic' | 'post';
  created_at: Date;
  updated_at: Date;
}

export function customProviderIdOf(scope: ProviderScope, service: string): string {
  return `${scope.account_id}:${scope.environment}:${service}`;
}

/** Custom tools' OAuth clients (store/custom-provider.repository.ts). */
export interface CustomProviderStore {
  find(scope: ProviderScope, service: string): Promise<CustomProviderDoc | null>;
  /** Creates or replaces (the last registration wins). */
  save(doc: CustomProviderDoc): Promise<void>;
  /** True when there was one. */
  delete(scope: ProviderScope, service: string): Promise<boolean>;
}
