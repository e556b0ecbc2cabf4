import type { AxiosResponse } from 'axios';
import { classifyHttp, retryAfterMs, type Verdict } from './provider-http.js';

/**
 * Google APIs' error body: `{error: {code, message, status, errors: [{reason}]}}`.
 * 403 means a quota (rateLimitExceeded …) or missing scopes (insufficientPermissions,
 * ACCESS_TOKEN_SCOPE_INSUFFICIENT); 401 with `invalid_client`/`deleted_client` is the client.
 * A 403 for want of access to the calendar itself (`requiredAccessLevel`, `forbidden`: "You need
 * to have writer access to this calendar") is not a scope: re-authorizing does not help, so it
 * is a rejected request that names what is missing.
 */
export function classifyGoogle(res: AxiosResponse): Verdict {
  const err = (
    res.data as
      | { error?: { status?: string; message?: string; errors?: { reason?: string }[]; details?: { reason?: string }[] } | string }
      | undefined
  )?.error;
  if (err && typeof err === 'object') {
    const reasons = [...(err.errors ?? []), ...(err.details ?? [])].map((e) => e.reason ?? '');
    if (reasons.some((r) => /^(?:rateLimitExceeded|userRateLimitExceeded|quotaExceeded|RATE_LIMIT_EXCEEDED)$/.test(r)))
      return { kind: 'rate_limited', retryAfterMs: retryAfterMs(res) };
    if (res.status === 403 && reasons.some((r) => /^(?:requiredAccessLevel|forbidden|forbiddenForNonOrganizer)$/.test(r)))
      return { kind: 'rejected', detail: err.message };
    if (
      res.status === 403 &&
      (reasons.some((r) => /insufficientPermissions|ACCESS_TOKEN_SCOPE_INSUFFICIENT/.test(r)) || err.status === 'PERMISSION_DENIED')
    ) {
      return { kind: 'insufficient_scope', detail: err.message };
    }
    if (res.status === 401 && reasons.some((r) => /^(?:invalid_client|deleted_client|unauthorized_client)$/.test(r)))
      return { kind: 'client_rejected', detail: reasons.join(',') };
  }
  return classifyHttp(res);
}
