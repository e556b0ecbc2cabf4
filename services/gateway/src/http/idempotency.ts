import type { Response } from 'express';
import { newId, type Environment } from '@tes/contracts';
import { AppError, isAppError, toEnvelope } from '@tes/errors';
import { IDEMPOTENCY_TTL_MS, bodyHash, idempotencyRecordId, isFinalStatus, isValidIdempotencyKey, judge } from '../domain/idempotency.js';
import type { IdempotencyDoc, IdempotencyRepository } from '../store/idempotency.repository.js';

export interface Answer {
  status: number;
  body: unknown;
}

export interface IdempotencyDeps {
  keys: IdempotencyRepository;
  /** How long an in-progress record is believed before it counts as abandoned. */
  leaseMs: number;
}

/**
 * Spec 8.4 with the brief's decisions. `run(taskId)` performs the request and
 * returns its answer (or throws an AppError). Without a key, it just runs.
 *
 * The winner of a key is decided by an insert (`_id` = account:environment:key)
 * carrying the body's hash and the task id to use; only the winner writes the
 * answer into the record. Everyone else reads: other body → 409 reused, still
 * running → 409 in_progress, answered → the same status and body again.
 */
export async function idempotent(
  deps: IdempotencyDeps,
  scope: { accountId: string; environment: Environment; key: string | undefined; body: unknown },
  res: Response,
  run: (taskId: string) => Promise<Answer>,
): Promise<void> {
  const { key } = scope;
  if (key === undefined) return send(res, await run(newId('task')));
  if (!isValidIdempotencyKey(key)) {
    throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  }
  const id = idempotencyRecordId(scope.accountId, scope.environment, key);
  const hash = bodyHash(scope.body);
  for (let attempt = 0; attempt < 4; attempt++) {
    const now = new Date();
    const mine = await deps.keys.claim(
      {
        _id: id,
        account_id: scope.accountId,
        environment: scope.environment,
        body_hash: hash,
        task_id: newId('task'),
        created_at: now,
        expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
      },
      now,
    );
    if (mine) return holdAndRun(deps, mine, res, run);
    const existing = await deps.keys.get(id);
    if (!existing) continue; // swept between our insert and read: try to win it again
    switch (judge(existing, hash, now.getTime(), deps.leaseMs)) {
      case 'expired':
        await deps.keys.deleteExpired(existing);
        continue;
      case 'reused':
        throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request body');
      case 'in_progress':
        throw new AppError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly', {
          headers: { 'Retry-After': '1' },
        });
      case 'replay': {
        res.setHeader('Idempotent-Replayed', 'true');
        const stored = existing.response ?? { status: 500, body: toEnvelope(new AppError('internal_error', 'stored answer missing')) };
        return send(res, stored);
      }
      case 'retry':
        await deps.keys.takeOver(existing, now);
        return holdAndRun(deps, existing, res, run);
    }
  }
  throw new AppError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed; retry shortly', {
    headers: { 'Retry-After': '1' },
  });
}

async function holdAndRun(
  deps: IdempotencyDeps,
  record: IdempotencyDoc,
  res: Response,
  run: (taskId: string) => Promise<Answer>,
): Promise<void> {
  let answer: Answer;
  try {
    answer = await run(record.task_id);
  } catch (err) {
    if (isAppError(err) && isFinalStatus(err.status)) {
      await deps.keys.complete(record, { status: err.status, body: toEnvelope(err) });
    } else {
      await deps.keys.release(record).catch(() => undefined);
    }
    throw err;
  }
  // If storing fails the record stays in progress until its lease ends; a retry then
  // reuses the task id and gets the same task back from the orchestrator.
  await deps.keys.complete(record, answer).catch(() => undefined);
  send(res, answer);
}

function send(res: Response, answer: Answer): void {
  res.status(answer.status).json(answer.body);
}
