import { findAction } from '@tes/catalog';
import { accessToken } from '../provider-api/credentials.js';
import type { ToolContext } from './tool.js';

/**
 * The sandbox world of the step's account, user and service. The user must have connected
 * the service first, as live (the vault's sandbox consent page; the token is asked for and
 * not used), unless SANDBOX_AUTO_CONNECT.
 */
export async function sandboxScope(ctx: ToolContext, service: string): Promise<string> {
  await requireSandboxConnection(ctx, service, findAction(ctx.step.tool, ctx.step.action)?.scopes ?? []);
  // One world per account, user ('-' for none) and service.
  return `${ctx.step.account_id}:${ctx.step.user_id ?? '-'}:${service}`;
}

/** Without SANDBOX_AUTO_CONNECT, throws AuthorizationRequired (the task waits) until the user has allowed the sandbox connection. */
export async function requireSandboxConnection(ctx: ToolContext, service: string, scopes: readonly string[]): Promise<void> {
  if (!ctx.env.settings.sandboxAutoConnect) await accessToken(ctx, service, scopes);
}

/** Deterministic ids: the same step always makes the same id. */
export function sandboxId(prefix: string, seq: number, width = 6): string {
  return `${prefix}${String(seq).padStart(width, '0')}`;
}

export const SANDBOX_HOST = 'https://sandbox.tes.invalid';
