import type { Response } from 'express';
import type { MessageDataMap, MessageType, TaskReply } from '@tes/contracts';
import { AppError, isApiErrorCode } from '@tes/errors';
import { requestIdOf } from '@tes/http';
import { BrokerUnavailableError, RequestTimeoutError, type Broker } from '@tes/messaging';

/** How an API request asks another service: its broker, how long it waits, and its request id as the correlation id. */
export interface Upstream {
  broker: Broker;
  timeoutMs: number;
  correlationId?: string;
}

/** The Upstream of the API request answered by `res`: its X-Request-Id travels as every message's correlation id. */
export function upstreamOf(deps: { broker: Broker; timeoutMs: number }, res: Response): Upstream {
  const id = requestIdOf(res);
  return { broker: deps.broker, timeoutMs: deps.timeoutMs, ...(id ? { correlationId: id } : {}) };
}

/**
 * Request/reply to the service that owns `type`, under the caller's correlation id. Every
 * gateway → service request goes through here; an unreachable back end is 503 (upstreamError).
 */
export function ask<T extends MessageType>(u: Upstream, type: T, data: MessageDataMap[T], partitionKey?: string): Promise<unknown> {
  return u.broker
    .request(type, data, {
      timeoutMs: u.timeoutMs,
      ...(u.correlationId ? { correlationId: u.correlationId } : {}),
      ...(partitionKey !== undefined ? { partitionKey } : {}),
    })
    .catch(upstreamError);
}

/** Turns a failed request/reply into the API's answer: 503 for an unreachable back end. */
export function upstreamError(err: unknown): never {
  if (err instanceof RequestTimeoutError || err instanceof BrokerUnavailableError) {
    throw new AppError('temporarily_unavailable', 'The service is temporarily unavailable; retry shortly', {
      headers: { 'Retry-After': '1' },
    });
  }
  throw err;
}

/** The orchestrator's answer: the task, or its error as the API's (a refused create keeps its suggestion and what is missing). */
export function unwrapReply(reply: unknown): NonNullable<TaskReply['task']> & Record<string, unknown> {
  const r = reply as TaskReply;
  if (!r.ok) {
    const code = r.error?.code;
    throw new AppError(isApiErrorCode(code) ? code : 'internal_error', r.error?.message ?? 'request failed', {
      suggestion: r.error?.suggestion,
      missing: r.error?.missing,
    });
  }
  return r.task ?? {};
}

interface VaultReply {
  ok?: boolean;
  error?: { code?: string; message?: string };
}

/**
 * The oauth-vault's `{ok: true, ...}` or `{ok: false, error: {code, message}}`. Its
 * "not found" (`not_found` or `connection_not_found`) is 404 connection_not_found;
 * another API code passes through; anything else is an internal error.
 */
export function vaultReply<T extends object>(reply: unknown, opts: { notFound?: string } = {}): T {
  const r = (reply ?? {}) as VaultReply;
  if (r.ok === true) return r as T;
  const code = r.error?.code;
  if (code === 'not_found' || code === 'connection_not_found') {
    throw new AppError('connection_not_found', opts.notFound ?? r.error?.message ?? 'No such connection');
  }
  if (code === 'temporarily_unavailable') {
    throw new AppError(code, r.error?.message ?? 'The service is temporarily unavailable; retry shortly', {
      headers: { 'Retry-After': '1' },
    });
  }
  if (isApiErrorCode(code) && code !== 'internal_error') throw new AppError(code, r.error?.message ?? code);
  throw new AppError('internal_error', 'An internal error occurred; retry with exponential backoff');
}
