import { AppError } from '@tes/errors';
import type { Environment } from '@tes/contracts';
import { OutboundRefusedError } from '@tes/outbound';
import { ensureSecret } from './manage-secrets.use-case.js';
import type { EndpointStore, SecretStore } from './ports.js';
import { policyFor, type GuardOptions } from './ssrf-guard.js';

export interface EndpointView {
  account_id: string;
  environment: Environment;
  url: string;
  created_at: string;
  updated_at: string;
}

/** `webhooks set`: checks the URL against the destination guard, stores it, makes sure a secret exists. */
export async function setEndpoint(
  deps: { endpoints: EndpointStore; secrets: SecretStore; guard: GuardOptions },
  accountId: string,
  environment: Environment,
  url: string,
): Promise<EndpointView> {
  try {
    await policyFor(environment, deps.guard).checkDestination(url);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new AppError('invalid_request', `webhook URL refused: ${err.reason}`);
    throw err;
  }
  const doc = await deps.endpoints.set(accountId, environment, url);
  await ensureSecret(deps.secrets, accountId, environment);
  return view(doc);
}

export async function getEndpoint(endpoints: EndpointStore, accountId: string, environment: Environment): Promise<EndpointView> {
  const doc = await endpoints.get(accountId, environment);
  if (!doc) throw new AppError('not_found', `account ${accountId} has no ${environment} webhook endpoint`);
  return view(doc);
}

function view(doc: { account_id: string; environment: Environment; url: string; created_at: Date; updated_at: Date }): EndpointView {
  return {
    account_id: doc.account_id,
    environment: doc.environment,
    url: doc.url,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
