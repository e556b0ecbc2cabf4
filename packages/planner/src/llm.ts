import { BUILT_IN_TOOLS, findAction, findReferences, withoutReferencedFields, type ToolDef } from '@tes/catalog';
import { compile, describeErrors } from '@tes/contracts';
import type { WorkflowStep } from './types.js';
import { planWorkflow } from './legacy/planner.js';

/**
 * The pluggable LLM planner: any OpenAI-compatible chat-completions endpoint with tool
 * calling (`POST {LLM_BASE_URL}/chat/completions`). Every catalog action is offered as a
 * function `<tool>__<action>` whose parameters are the action's input schema; the model
 * answers one tool call per workflow step, in order. What it returns is checked against
 * the catalog (known action, input valid against its schema once references are set
 * aside, references only to earlier steps); on any error (not configured, HTTP failure,
 * timeout, no tool calls, invalid call) the deterministic planner's workflow is used.
 *
 * Call it after the create answer, never before: it waits on the network.
 */
export interface LlmPlannerOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  /** "tomorrow" is relative to this instant; pass the task's created_at. */
  now?: Date;
  tools?: readonly ToolDef[];
  /** Whole request, default 20 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Told why the LLM's plan was not used (for a log line). */
  onFallback?: (reason: string) => void;
}

export interface LlmPlan {
  steps: WorkflowStep[];
  planner: 'llm' | 'deterministic';
  fallback_reason?: string;
}

/** The LLM planner's settings from LLM_BASE_URL, LLM_API_KEY, LLM_MODEL (and LLM_TIMEOUT_MS); undefined unless all three are set. */
export function llmOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): LlmPlannerOptions | undefined {
  const baseUrl = env['LLM_BASE_URL']?.trim();
  const apiKey = env['LLM_API_KEY']?.trim();
  const model = env['LLM_MODEL']?.trim();
  if (!baseUrl || !apiKey || !model) return undefined;
  const timeout = Number(env['LLM_TIMEOUT_MS']);
  return { baseUrl, apiKey, model, ...(Number.isFinite(timeout) && timeout > 0 ? { timeoutMs: timeout } : {}) };
}

export async function planWorkflowWithLlm(
  prompt: string,
  tool: ToolDef | undefined,
  options: LlmPlannerOptions | undefined,
): Promise<WorkflowStep[]> {
  return (await planWithLlm(prompt, tool, options)).steps;
}

export async function planWithLlm(prompt: string, tool: ToolDef | undefined, options: LlmPlannerOptions | undefined): Promise<LlmPlan> {
  const now = options?.now ?? new Date();
  const fallback = (reason: string): LlmPlan => {
    options?.onFallback?.(reason);
    return { steps: planWorkflow(prompt, tool, now), planner: 'deterministic', fallback_reason: reason };
  };
  if (!options) return fallback('the LLM planner is not configured');
  const tools = options.tools ?? BUILT_IN_TOOLS;
  try {
    const calls = await chat(prompt, tools, options, now);
    if (calls.length === 0) return fallback('the model called no tool');
    return { steps: validate(calls, tools), planner: 'llm' };
  } catch (err) {
    return fallback((err as Error).message);
  }
}

const SEP = '__';

export function functionName(tool: string, action: string): string {
  return `${tool}${SEP}${action}`;
}

export function systemMessage(now: Date): string {
  return [
    'You turn a user request into a workflow of tool calls. Call the functions, one call per step, in the order the steps must run.',
    'Do not answer with text. Call only the functions given. Use only arguments the schemas allow.',
    'A step may use the output of an EARLIER step through a string placeholder {{steps.N.output.PATH}}: N is the 0-based index of that step, PATH its output field, e.g. {{steps.0.output.number}} or {{steps.0.output.items.2.title}}. A string that is exactly one placeholder becomes that value (list, object, number).',
    'List and search actions answer {items: [...], count}. To do something "for each" item, emit one call per item.',
    `Dates and times are ISO 8601 in UTC. It is now ${now.toISOString()}.`,
  ].join('\n');
}

interface ToolCall {
  name: string;
  arguments: string;
}

async function chat(prompt: string, tools: readonly ToolDef[], o: LlmPlannerOptions, now: Date): Promise<ToolCall[]> {
  const body = {
    model: o.model,
    temperature: 0,
    messages: [
      { role: 'system', content: systemMessage(now) },
      { role: 'user', content: prompt },
    ],
    tools: tools.flatMap((t) =>
      t.actions.map((a) => ({
        type: 'function',
        function: { name: functionName(t.name, a.name), description: `${t.description} ${a.description}`.trim(), parameters: a.input },
      })),
    ),
    tool_choice: 'auto',
  };
  const doFetch = o.fetch ?? fetch;
  const timeoutMs = o.timeoutMs ?? 20_000;
  let res: Response;
  try {
    res = await doFetch(`${o.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${o.apiKey}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const e = err as Error;
    throw new Error(
      e.name === 'TimeoutError' ? `the model did not answer within ${timeoutMs} ms` : `the model could not be reached: ${e.message}`,
    );
  }
  if (!res.ok) throw new Error(`the model answered HTTP ${res.status}`);
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    throw new Error('the model answered something that is not JSON');
  }
  const message = (json as { choices?: { message?: { tool_calls?: unknown } }[] }).choices?.[0]?.message;
  const raw = message?.tool_calls;
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new Error('tool_calls is not a list');
  return raw.map((c: unknown, i) => {
    const fn = (c as { function?: { name?: unknown; arguments?: unknown } }).function;
    if (typeof fn?.name !== 'string') throw new Error(`tool call ${i} has no function name`);
    const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    return { name: fn.name, arguments: args };
  });
}

function validate(calls: ToolCall[], tools: readonly ToolDef[]): WorkflowStep[] {
  return calls.map((call, i) => {
    const [tool = '', action = ''] = call.name.split(SEP);
    const def = findAction(tool, action, tools);
    if (!def) throw new Error(`step ${i}: unknown function ${call.name}`);
    let input: unknown;
    try {
      input = JSON.parse(call.arguments);
    } catch {
      throw new Error(`step ${i}: the arguments of ${call.name} are not JSON`);
    }
    if (!input || typeof input !== 'object' || Array.isArray(input))
      throw new Error(`step ${i}: the arguments of ${call.name} are not an object`);
    const args = input as Record<string, unknown>;
    for (const r of findReferences(args)) {
      if (r.step >= i) throw new Error(`step ${i}: {{steps.${r.step}.output…}} does not refer to an earlier step`);
    }
    const { schema, input: checked } = withoutReferencedFields(def.input, args);
    const check = compile(schema);
    if (!check(structuredClone(checked)))
      throw new Error(`step ${i}: invalid input for ${tool}.${action}: ${describeErrors(check.errors, 'input')}`);
    return { tool, action, input: args };
  });
}
