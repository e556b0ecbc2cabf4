import type { RequestHandler } from 'express';
import { PROMPT_MAX_CHARS, createTaskBodySchema, isoNow, type CreateTaskBody, type CreatedTask } from '@tes/contracts';
import { AppError } from '@tes/errors';
import { validBody } from '@tes/http';
import type { Broker } from '@tes/messaging';
import type { TaskViewRepository } from '../../../store/task-view.repository.js';
import { authOf } from '../../auth.js';
import { concurrentTasks } from '../../../domain/rate-window.js';
import type { CreateBacklog } from '../../../domain/create-backlog.js';
import { idempotent, type IdempotencyDeps } from '../../idempotency.js';
import { ask, taskOrApiError, upstreamOf } from '../../upstream.js';

/** Spec 8.1: counted in Unicode code points, so an emoji (one astral code point) is one character. */
export function promptLength(prompt: string): number {
  let n = 0;
  for (const _ of prompt) n++;
  return n;
}

/**
 * POST /v1/tasks → 201 {id, status, tool, created_at, metadata}. `status` is
 * `running`, or `pending` when the account is at its concurrent-task limit (the
 * orchestrator admits it FIFO when a running task ends). A request the planner refuses is 422
 * (no_matching_tool, missing_input, unsupported_request) with a `suggestion`. The wait for the
 * orchestrator's answer is `timeoutMs` (CREATE_TIMEOUT_MS: it covers an LLM planner's call).
 */
export function createTaskRoute(deps: {
  broker: Broker;
  views: TaskViewRepository;
  timeoutMs: number;
  idempotency: IdempotencyDeps;
  /** Counts each create until the orchestrator answers it (what load shedding looks at). */
  backlog: CreateBacklog;
}): RequestHandler {
  return async (req, res) => {
    const body = validBody<CreateTaskBody>(req, createTaskBodySchema);
    const chars = promptLength(body.prompt);
    if (chars > PROMPT_MAX_CHARS) {
      throw new AppError('prompt_too_long', `prompt has ${chars} characters; the maximum is ${PROMPT_MAX_CHARS}`);
    }
    const { account, environment } = authOf(res);
    const scope = { accountId: account._id, environment, key: req.get('idempotency-key'), body };
    await idempotent(deps.idempotency, scope, res, async (taskId) => {
      const metadata = (body.metadata ?? {}) as Record<string, unknown>;
      const reply = await deps.backlog.track(
        account._id,
        ask(
          upstreamOf(deps, res),
          'task.create',
          {
            task_id: taskId,
            account_id: account._id,
            environment,
            prompt: body.prompt,
            user_id: body.user_id ?? null,
            metadata,
            mode: body.mode ?? 'live',
            created_at: isoNow(),
            concurrency_limit: concurrentTasks(account),
          },
          account._id,
        ),
      );
      const { task, version } = taskOrApiError(reply);
      if (!('tool' in task)) throw new Error('task.create was answered with a cancelled task');
      await deps.views.apply({
        _id: task.id,
        account_id: account._id,
        environment,
        user_id: body.user_id ?? null,
        status: task.status,
        tool: task.tool,
        metadata: task.metadata,
        created_at: task.created_at,
        ...(task.planner ? { planner: task.planner } : {}),
        version,
      });
      // user_id and mode are accepted but never echoed (spec 2.1).
      const created: CreatedTask = {
        id: task.id,
        status: task.status,
        tool: task.tool,
        created_at: task.created_at,
        metadata: task.metadata,
      };
      return { status: 201, body: created };
    });
  };
}
