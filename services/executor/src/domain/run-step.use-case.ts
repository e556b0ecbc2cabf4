import { coerceToSchema, findAction, findReferences, StepReferenceError, resolveReferences, serviceOf } from '@tes/catalog';
import { compile, compileDynamic, describeErrors, type StepResult, type StepRun, type TraceStep } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { Broker } from '@tes/messaging';
import { serviceLabel } from '../provider-api/credentials.js';
import { isDatabaseUnavailable } from '@tes/errors';
import { checkCustomInput, runCustomAction } from '../tools/custom.tool.js';
import { actionImpl } from '../tools/registry.js';
import { AuthorizationRequired, ToolError, TransientError, type ActionImpl, type EngineSettings, type ToolContext } from '../tools/tool.js';
import { fallbackAdvice, inputAdvice, referenceAdvice, timeoutAdvice } from './failure-advice.js';
import type { SandboxStore } from './sandbox.js';
import type { StepClaimStore } from './step-claim.js';
import type { StepRunStore } from './step-run.js';

export interface RunStepDeps {
  steps: StepRunStore;
  /** When given, a step runs only under a claim: never twice at the same time. */
  claims?: StepClaimStore | undefined;
  sandbox: SandboxStore;
  logger: Logger;
  settings: EngineSettings;
  broker?: Broker | undefined;
  /** The correlation id of the step.run message: carried on the step's requests to the vault. */
  correlationId?: string | undefined;
}

/** The step could not run for want of data (fewer items than planned, an upstream skip): recorded as skipped. */
class Skip extends Error {}

/**
 * Runs one step at most once: a step already recorded is not run again (redelivery,
 * crash after the record); its recorded result is returned to be sent again.
 *
 * Before running, `{{steps.N.output…}}` references in the input are resolved from the
 * recorded outputs of the same task's earlier steps.
 *
 * Not recorded, so that the same step runs again later with the same idempotency key:
 *  - needs_authorization (nothing happened; the orchestrator re-dispatches after consent);
 *  - TransientError (our vault or broker failed) and lost connections to our database or
 *    broker (isInfrastructureError): thrown, the message is redelivered.
 */
export async function runStep(step: StepRun, deps: RunStepDeps): Promise<StepResult>;
export async function runStep(step: StepRun, deps: RunStepDeps & { claims: StepClaimStore }): Promise<StepResult | undefined>;
/**
 * With `claims`, answers undefined while another executor runs the same step: the
 * caller acknowledges without a result; the holder sends it, or, if the holder died,
 * the orchestrator's reaper dispatches the step again once the lease has run out.
 */
export async function runStep(step: StepRun, deps: RunStepDeps): Promise<StepResult | undefined> {
  const key = step.idempotency_key;
  if (!deps.claims) {
    const done = await deps.steps.find(key);
    return done ? done.result : runClaimed(step, deps);
  }
  const leaseMs = step.timeout_ms + CLAIM_MARGIN_MS;
  // A step's first dispatch: generation 0 is free only if the step was never claimed, so never
  // run (a step is recorded by its claim's holder only): no read needed.
  let claim = await deps.claims.claimFirst(key, leaseMs);
  if (!claim) {
    // Claimed before: recorded already (answer again), held by someone else, or free again
    // (released, or its holder died). Both reads at once: one round trip of waiting instead of two.
    const [done, latest] = await Promise.all([deps.steps.find(key), deps.claims.latest(key)]);
    if (done) return done.result;
    claim = await deps.claims.acquire(key, leaseMs, Date.now(), latest);
  }
  if (!claim) {
    deps.logger.info('step is being run by another executor; not run again', { task_id: step.task_id, step_index: step.step_index });
    return undefined;
  }
  try {
    const result = await runClaimed(step, deps);
    // Not recorded (it will run again after consent): let the next dispatch run it at once.
    if (result.outcome === 'needs_authorization') await deps.claims.release(claim);
    return result;
  } catch (err) {
    await deps.claims.release(claim).catch(() => undefined);
    throw err;
  }
}

/** Beyond the step's own timeout, how long a claim is believed before a takeover. */
const CLAIM_MARGIN_MS = 5000;

async function runClaimed(step: StepRun, deps: RunStepDeps): Promise<StepResult> {
  const started = Date.now();
  const base = { task_id: step.task_id, account_id: step.account_id, environment: step.environment, step_index: step.step_index };
  let result: StepResult;
  let status: TraceStep['status'] = 'complete';
  let note: string | undefined;
  // The input as resolved for the run, for naming what a failure concerns.
  const seen: { input?: Record<string, unknown> } = {};
  try {
    const output = await execute(step, deps, seen);
    result = { ...base, outcome: 'complete', output, duration_ms: Date.now() - started };
  } catch (err) {
    if (err instanceof AuthorizationRequired) {
      deps.logger.info('step needs authorization', {
        task_id: step.task_id,
        step_index: step.step_index,
        service: err.authorization.service,
      });
      return { ...base, outcome: 'needs_authorization', authorization: err.authorization, duration_ms: Date.now() - started };
    }
    // Our own database or broker failing mid-step is not the tool's failure: nothing is
    // recorded and the step.run message is redelivered, as for TransientError.
    if (err instanceof TransientError || isInfrastructureError(err)) throw err;
    if (err instanceof Skip) {
      status = 'skipped';
      note = err.message;
      result = {
        ...base,
        outcome: 'complete',
        output: { skipped: true, reason: err.message },
        duration_ms: Date.now() - started,
        note: err.message,
      };
    } else {
      const e = err instanceof ToolError ? err : new ToolError('step_failed', `step failed: ${(err as Error).message}`, false);
      status = 'failed';
      note = e.message;
      // Every failure tells the user what to do: a tool's error without advice gets it by its code.
      const suggestion = e.suggestion ?? fallbackAdvice(e, step, seen.input ?? step.input, toolLabel(step));
      result = {
        ...base,
        outcome: 'failed',
        error: { code: e.code, message: e.message, tool: step.tool, recoverable: e.recoverable, suggestion },
        duration_ms: Date.now() - started,
      };
      deps.logger.info('step failed', { task_id: step.task_id, step_index: step.step_index, code: e.code });
    }
  }

  const recorded = await deps.steps.record({
    _id: step.idempotency_key,
    task_id: step.task_id,
    account_id: step.account_id,
    environment: step.environment,
    step_index: step.step_index,
    tool: step.tool,
    action: step.action,
    result,
    trace: { tool: step.tool, action: step.action, status, duration_ms: result.duration_ms, ...(note ? { note } : {}) },
    finished_at: new Date(),
  });
  return recorded.result;
}

/** A lost connection to our MongoDB-wire server or broker. */
export function isInfrastructureError(err: unknown): boolean {
  return isDatabaseUnavailable(err) || (err as { name?: unknown } | null | undefined)?.name === 'BrokerUnavailableError';
}

async function resolveInput(step: StepRun, deps: RunStepDeps, schema: object): Promise<Record<string, unknown>> {
  const refs = findReferences(step.input);
  if (refs.length === 0) return step.input;
  const outputs = await deps.steps.outputsOf(step.task_id, step.account_id, step.environment, [...new Set(refs.map((r) => r.step))]);
  try {
    return coerceToSchema(
      resolveReferences(step.input, (i) => outputs.get(i), step.step_index),
      schema,
    );
  } catch (err) {
    if (err instanceof StepReferenceError) {
      if (err.skip) throw new Skip(`skipped: ${err.message}`);
      // The first field that does not resolve on its own is the one that failed as a whole.
      const field = Object.keys(step.input).find((k) => {
        try {
          resolveReferences(step.input[k], (i) => outputs.get(i), step.step_index);
          return false;
        } catch {
          return true;
        }
      });
      throw new ToolError('step_failed', `invalid reference: ${err.message}`, false, referenceAdvice(field, schema));
    }
    throw err;
  }
}

/** What the user calls the place a step acts on: the service ("GitHub"), else the tool. */
function toolLabel(step: StepRun): string {
  if (step.custom) return step.custom.service ? serviceLabel(step.custom.service) : step.tool;
  if (step.tool === 'http') return 'the web server';
  return serviceLabel(serviceOf(step.tool) ?? step.tool);
}

async function execute(step: StepRun, deps: RunStepDeps, seen: { input?: Record<string, unknown> }): Promise<Record<string, unknown>> {
  const label = `${step.tool}.${step.action}`;
  const custom = step.custom;
  let impl: ActionImpl;
  let input: Record<string, unknown>;
  if (custom) {
    // A custom tool's action: its registered definition travels with the step.
    input = structuredClone(await resolveInput(step, deps, custom.input_schema));
    seen.input = input;
    try {
      checkCustomInput(custom, input, label);
    } catch (err) {
      if (!(err instanceof ToolError) || err.suggestion) throw err;
      throw new ToolError(err.code, err.message, err.recoverable, customInputAdvice(custom.input_schema, input));
    }
    impl = (i, ctx) => runCustomAction(custom, i, ctx);
  } else {
    const def = findAction(step.tool, step.action);
    const builtIn = actionImpl(step.tool, step.action, step.environment);
    if (!def || !builtIn) {
      throw new ToolError(
        'step_failed',
        `unknown action ${label}`,
        false,
        `${toolLabel(step)} cannot "${step.action.replaceAll('_', ' ')}" here; ask for something else it can do`,
      );
    }
    impl = builtIn;
    input = structuredClone(await resolveInput(step, deps, def.input));
    seen.input = input;
    const check = compile(def.input);
    if (!check(input)) {
      throw new ToolError(
        'step_failed',
        `invalid input for ${label}: ${describeErrors(check.errors, 'input')}`,
        false,
        inputAdvice(check.errors, input, def.input),
      );
    }
  }
  const controller = new AbortController();
  const ctx: ToolContext = {
    step,
    input,
    signal: controller.signal,
    env: { settings: deps.settings, logger: deps.logger, sandbox: deps.sandbox, broker: deps.broker, correlationId: deps.correlationId },
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(
        new ToolError(
          'step_timeout',
          `${step.tool}.${step.action} did not finish within ${step.timeout_ms} ms`,
          true,
          timeoutAdvice(step, toolLabel(step)),
        ),
      );
    }, step.timeout_ms);
  });
  try {
    return await Promise.race([impl(input, ctx), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The advice for a custom action's input that fails its registered schema. */
function customInputAdvice(schema: object, input: Record<string, unknown>): string {
  try {
    const check = compileDynamic(schema);
    check(input);
    return inputAdvice(check.errors, input, schema);
  } catch {
    return 'Register the tool again with an input schema that compiles';
  }
}
