import { AppError } from '@tes/errors';
import { ENVIRONMENTS, type Environment } from '@tes/contracts';
import type { SecretStore } from './ports.js';
import { generateSecret } from './secret.js';

/** The environment's current secret, creating version 1 if it has none (idempotent, race-safe). */
export async function ensureSecret(secrets: SecretStore, accountId: string, environment: Environment, now = new Date()): Promise<string> {
  const [current] = await secrets.latest(accountId, environment, 1);
  if (current) return current.secret;
  await secrets.insert({
    account_id: accountId,
    environment,
    version: 1,
    secret: generateSecret(),
    created_at: now,
    previous_valid_until: null,
  });
  // Whoever won the insert of version 1, that one is the secret.
  const [winner] = await secrets.latest(accountId, environment, 1);
  if (!winner) throw new Error(`secret of ${accountId}/${environment} vanished`);
  return winner.secret;
}

export interface InitSecretsResult {
  account_id: string;
  webhook_secrets: Record<Environment, string>;
}

/** `secrets init`: a secret for test and for live; a second call returns the same ones. */
export async function initSecrets(secrets: SecretStore, accountId: string): Promise<InitSecretsResult> {
  const out: Partial<Record<Environment, string>> = {};
  for (const env of ENVIRONMENTS) out[env] = await ensureSecret(secrets, accountId, env);
  return { account_id: accountId, webhook_secrets: out as Record<Environment, string> };
}

export interface RotateResult {
  account_id: string;
  environment: Environment;
  webhook_secret: string;
  version: number;
  /** Until when deliveries are also signed with the previous secret. */
  previous_valid_until: string | null;
}

/**
 * `secrets rotate`: the new secret signs from now on; the previous one keeps signing beside it
 * (a second signature in each header) for `graceHours`, so receivers can switch without a gap.
 */
export async function rotateSecret(
  secrets: SecretStore,
  accountId: string,
  environment: Environment,
  graceHours: number,
  now = new Date(),
): Promise<RotateResult> {
  if (!Number.isFinite(graceHours) || graceHours < 0 || graceHours > 24 * 30)
    throw new AppError('invalid_request', '--grace-hours must be a number from 0 to 720');
  const [current] = await secrets.latest(accountId, environment, 1);
  if (!current) throw new AppError('not_found', `account ${accountId} has no ${environment} secret: run "secrets init" first`);
  const version = current.version + 1;
  const secret = generateSecret();
  const previousValidUntil = graceHours > 0 ? new Date(now.getTime() + graceHours * 3_600_000) : null;
  const inserted = await secrets.insert({
    account_id: accountId,
    environment,
    version,
    secret,
    created_at: now,
    previous_valid_until: previousValidUntil,
  });
  if (!inserted) throw new AppError('invalid_request', 'another rotation of this secret happened at the same time: run it again');
  return {
    account_id: accountId,
    environment,
    webhook_secret: secret,
    version,
    previous_valid_until: previousValidUntil?.toISOString() ?? null,
  };
}
