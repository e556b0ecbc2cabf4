import { ReplyValidationError, type CredentialReply } from '@tes/contracts';
import { reconnectAdvice } from '../domain/failure-advice.js';
import { AuthorizationRequired, ToolError, TransientError, type ToolContext } from '../tools/tool.js';
import { PROVIDER_APIS, isProviderName } from '../tools/provider-apis.js';

/**
 * A usable access token for the step's user and service, from the oauth-vault over
 * the broker (credential.get). The vault's answer maps to the step's outcome:
 *   ok                      → the token
 *   authorization_required  → needs_authorization (the task waits for consent; nothing is recorded)
 *   expired                 → failed auth_token_expired (recoverable: re-authorize)
 *   error                   → failed invalid_credentials (not recoverable by the user: the client is misconfigured)
 * No answer in time is our own fault, not the step's: TransientError, the step is retried.
 */
export async function accessToken(ctx: ToolContext, service: string, scopes: readonly string[], forceRefresh = false): Promise<string> {
  const { step, env } = ctx;
  if (!step.user_id) {
    throw new ToolError(
      'step_failed',
      `user_id is required: ${step.tool}.${step.action} acts on a user's ${service} account`,
      false,
      `Create the task with the user_id of the person whose ${serviceLabel(service)} account it should use`,
    );
  }
  if (!env.broker) throw new TransientError('no broker to reach the credential vault');
  let reply: CredentialReply;
  try {
    reply = await env.broker.request(
      'credential.get',
      {
        account_id: step.account_id,
        environment: step.environment,
        user_id: step.user_id,
        service,
        scopes: [...scopes],
        task_id: step.task_id,
        ...(forceRefresh ? { force_refresh: true } : {}),
      },
      { timeoutMs: env.settings.vaultTimeoutMs, ...(env.correlationId ? { correlationId: env.correlationId } : {}) },
    );
  } catch (err) {
    if (err instanceof ReplyValidationError) throw new TransientError('credential vault sent a malformed reply');
    throw new TransientError(`credential vault unavailable: ${(err as Error).message}`);
  }
  const label = serviceLabel(service);
  switch (reply.status) {
    case 'ok':
      if (reply.access_token) return reply.access_token;
      // A connection without a token: connecting again gives it one.
      throw new ToolError('invalid_credentials', `The credential vault returned no ${label} token`, true, reconnectAdvice(label));
    case 'authorization_required':
      if (!reply.auth_url)
        throw new ToolError(
          'invalid_credentials',
          `${label} needs authorization but no authorization URL was given`,
          true,
          reconnectAdvice(label),
        );
      throw new AuthorizationRequired({
        reason: 'oauth_consent_required',
        service,
        auth_url: reply.auth_url,
        message: reply.message ?? `Authorize access to ${label} to continue`,
      });
    case 'expired':
      throw new ToolError(
        'auth_token_expired',
        reply.message ?? `The ${label} authorization expired and could not be refreshed`,
        true,
        reconnectAdvice(label, undefined, reply.auth_url),
      );
    default:
      throw new ToolError(
        'invalid_credentials',
        reply.message ?? `The credentials for ${label} are invalid`,
        false,
        `Check the ${label} OAuth client (id, secret, redirect URL) configured for the service, then retry the task`,
      );
  }
}

export function serviceLabel(service: string): string {
  return isProviderName(service) ? PROVIDER_APIS[service].label : service;
}
