import { QUEUES } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { Broker, DeliveryOn } from '@tes/messaging';
import { DEFAULT_LLM_TIMEOUT_MS, planWithLlm, type LlmPlannerOptions } from '@tes/planner';
import { catalogWith } from '../domain/custom-tools.js';
import { refusalReply } from '../domain/task-replies.js';
import type { ToolRepository } from '../store/tool.repository.js';

/** Time kept, out of the requester's wait, for the plan's way back through the partition (insert and answer). */
const ANSWER_MARGIN_MS = 1000;

export interface PlannerDeps {
  broker: Broker;
  tools: ToolRepository;
  llm: LlmPlannerOptions;
  logger: Logger;
  /** Model calls in flight on this replica at most (the queue's prefetch). */
  concurrency: number;
}

/**
 * The LLM planner, outside every partition's turn. A partition hands a create without a plan to
 * `orchestrator.planner` (Delivery.forward: same reply-to, correlation and deadline); every
 * replica consumes it, competing, `concurrency` at a time. The model plans (or refuses); on any
 * failure the rules planner does, with the reason recorded. A refusal is answered from here (no
 * task exists); a plan goes back to the account's partition as `task.create` with the plan
 * attached, whose writer inserts the task and answers the gateway's waiting request. A
 * redelivery plans again; the insert by task id decides, and a second plan is ignored.
 */
export async function consumePlanner(deps: PlannerDeps): Promise<void> {
  await deps.broker.consume(QUEUES.orchestratorPlanner, (d) => plan(deps, d), { prefetch: deps.concurrency });
}

async function plan(deps: PlannerDeps, d: DeliveryOn<typeof QUEUES.orchestratorPlanner>): Promise<void> {
  const cmd = d.data;
  const custom = await deps.tools.list(cmd.account_id, cmd.environment);
  // The model gets what is left of the requester's wait: a slow model then falls back in time.
  const budget = d.deadline === undefined ? Infinity : d.deadline - Date.now() - ANSWER_MARGIN_MS;
  const timeoutMs = Math.max(1, Math.min(deps.llm.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS, budget));
  const started = performance.now();
  const outcome = await planWithLlm(cmd.prompt, { ...deps.llm, timeoutMs, tools: catalogWith(custom), now: new Date(cmd.created_at) });
  const planner = outcome.ok ? outcome.plan.planner : outcome.refusal.planner;
  deps.logger.info('task planned', {
    task_id: cmd.task_id,
    account_id: cmd.account_id,
    correlation_id: d.envelope.correlation_id,
    planner: planner?.name,
    outcome: outcome.ok ? 'plan' : outcome.refusal.code,
    duration_ms: Math.round(performance.now() - started),
    ...(planner?.fallback_reason ? { fallback_reason: planner.fallback_reason } : {}),
  });
  if (!outcome.ok) return d.reply(refusalReply(outcome.refusal));
  await d.forward(
    'task.create',
    { ...cmd, plan: outcome.plan },
    { partitionKey: cmd.account_id, ...(d.envelope.correlation_id ? { correlationId: d.envelope.correlation_id } : {}) },
  );
}
