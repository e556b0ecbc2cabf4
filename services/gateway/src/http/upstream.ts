import type { Response } from 'express';
import type { MessageDataMap, RefusalReply, ReplyOf, RequestType, TaskReply } from '@tes/contracts';
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
export function ask<T extends RequestType>(u: Upstream, type: T, data: MessageDataMap[T], partitionKey?: string): Promise<ReplyOf<T>> {
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

/** The orchestrator's answer to task.create or task.cancel: the task's version and view, or its error as the API's (a refused create keeps its suggestion and what is missing). */
export function taskOrApiError(reply: TaskReply): Extract<TaskReply, { ok: true }> {
  if (reply.ok) return reply;
  const { code, message, suggestion, missing } = reply.error;
  throw new AppError(isApiErrorCode(code) ? code : 'internal_error', message, { suggestion, missing });
}

/**
 * The oauth-vault's answer. Its "not found" (`not_found` or `connection_not_found`) is 404
 * connection_not_found; another refusal is the API's error (refusalError).
 */
export function vaultOrApiError<A extends { ok: true }>(reply: A | RefusalReply, opts: { notFound?: string } = {}): A {
  if (reply.ok) return reply;
  const { code, message } = reply.error;
  if (code === 'not_found' || code === 'connection_not_found') throw new AppError('connection_not_found', opts.notFound ?? message);
  throw refusalError(reply);
}

/** A refusal as the API's error: temporarily_unavailable (with Retry-After) and other API codes pass through; anything else is an internal error. */
export function refusalError({ error: { code, message } }: RefusalReply): AppError {
  if (code === 'temporarily_unavailable') return new AppError(code, message, { headers: { 'Retry-After': '1' } });
  if (isApiErrorCode(code) && code !== 'internal_error') return new AppError(code, message);
  return new AppError('internal_error', 'An internal error occurred; retry with exponential backoff');
}
