import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { llmOptionsFromEnv, planWithLlm, planWorkflowWithLlm, type LlmPlannerOptions } from './llm.js';
import { selectTool } from './legacy/planner.js';

/** The LLM planner against a local HTTP server speaking the OpenAI chat-completions wire format. */
describe('LLM planner', () => {
  let server: http.Server;
  let base: string;
  const timers = new Set<NodeJS.Timeout>();
  const requests: { path: string; auth: string | undefined; body: any }[] = [];
  let answer: (body: any) => { status: number; json?: unknown; delayMs?: number } = () => ({ status: 500 });

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
        requests.push({ path: req.url ?? '', auth: req.headers.authorization, body });
        if (req.url !== '/v1/chat/completions' || req.headers.authorization !== 'Bearer sk-test') {
          res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'bad key' } }));
          return;
        }
        const a = answer(body);
        timers.add(
          setTimeout(
            () =>
              res
                .writeHead(a.status, { 'content-type': 'application/json' })
                .end(a.json === undefined ? 'not json' : JSON.stringify(a.json)),
            a.delayMs ?? 0,
          ),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    for (const t of timers) clearTimeout(t);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const NOW = new Date('2025-03-12T10:00:00Z');
  const opts = (extra: Partial<LlmPlannerOptions> = {}): LlmPlannerOptions => ({
    baseUrl: base,
    apiKey: 'sk-test',
    model: 'planner-1',
    now: NOW,
    timeoutMs: 2000,
    ...extra,
  });
  const completion = (calls: { name: string; args: unknown }[], content: string | null = null) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'planner-1',
    choices: [
      {
        index: 0,
        finish_reason: calls.length ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content,
          ...(calls.length
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: `call_${i}`,
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              }
            : {}),
        },
      },
    ],
  });
  const prompt = 'Create an issue titled "Flaky test" in acme/api then post it to #eng';

  it('sends the prompt, the model, the key and every catalog action as a function; uses the validated tool calls', async () => {
    answer = () => ({
      status: 200,
      json: completion([
        { name: 'github__create_issue', args: { owner: 'acme', repo: 'api', title: 'Flaky test', body: 'Seen twice today' } },
        { name: 'slack__post_message', args: { channel: 'eng', text: 'New issue: {{steps.0.output.url}}' } },
      ]),
    });
    const plan = await planWithLlm(prompt, selectTool(prompt), opts());
    expect(plan).toEqual({
      planner: 'llm',
      steps: [
        { tool: 'github', action: 'create_issue', input: { owner: 'acme', repo: 'api', title: 'Flaky test', body: 'Seen twice today' } },
        { tool: 'slack', action: 'post_message', input: { channel: 'eng', text: 'New issue: {{steps.0.output.url}}' } },
      ],
    });
    const sent = requests[requests.length - 1]!;
    expect(sent.body).toMatchObject({
      model: 'planner-1',
      temperature: 0,
      tool_choice: 'auto',
      messages: [{ role: 'system' }, { role: 'user', content: prompt }],
    });
    expect(sent.body.messages[0].content).toContain('It is now 2025-03-12T10:00:00.000Z');
    const names = sent.body.tools.map((t: any) => t.function.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'github__create_issue',
        'slack__post_message',
        'google_calendar__create_event',
        'gmail__send_email',
        'notion__query_database',
        'http__fetch',
        'text__echo',
      ]),
    );
    expect(names.every((n: string) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
    expect(sent.body.tools[0]).toMatchObject({
      type: 'function',
      function: { parameters: { type: 'object', required: ['owner', 'repo', 'title'] } },
    });
  });

  it.each([
    ['the model answers text only', () => ({ status: 200, json: completion([], 'I cannot do that') }), 'the model called no tool'],
    [
      'an unknown function',
      () => ({ status: 200, json: completion([{ name: 'jira__create_ticket', args: {} }]) }),
      'step 0: unknown function jira__create_ticket',
    ],
    [
      'arguments that miss a required field',
      () => ({ status: 200, json: completion([{ name: 'github__create_issue', args: { owner: 'acme', title: 'x' } }]) }),
      'step 0: invalid input for github.create_issue: repo is required',
    ],
    [
      'a reference to a later step',
      () => ({
        status: 200,
        json: completion([
          { name: 'text__echo', args: { text: '{{steps.1.output.text}}' } },
          { name: 'text__echo', args: { text: 'a' } },
        ]),
      }),
      'step 0: {{steps.1.output…}} does not refer to an earlier step',
    ],
    ['HTTP 500', () => ({ status: 500, json: { error: { message: 'boom' } } }), 'the model answered HTTP 500'],
    ['a body that is not JSON', () => ({ status: 200 }), 'the model answered something that is not JSON'],
    [
      'no answer within the timeout',
      () => ({ status: 200, json: completion([]), delayMs: 1500 }),
      'the model did not answer within 300 ms',
    ],
  ])('falls back to the deterministic planner on %s', async (_what, a, reason) => {
    answer = a;
    const reasons: string[] = [];
    const plan = await planWithLlm(prompt, selectTool(prompt), opts({ timeoutMs: 300, onFallback: (r) => reasons.push(r) }));
    expect(plan.planner).toBe('deterministic');
    expect(plan.fallback_reason).toBe(reason);
    expect(reasons).toEqual([reason]);
    expect(plan.steps.map((s) => `${s.tool}.${s.action}`)).toEqual(['github.create_issue', 'slack.post_message']);
    expect(plan.steps[1]?.input).toEqual({ channel: 'eng', text: '{{steps.0.output}}' });
  });

  it('falls back on a wrong key (401) and when not configured', async () => {
    const wrong = await planWithLlm(prompt, undefined, opts({ apiKey: 'sk-wrong' }));
    expect(wrong.fallback_reason).toBe('the model answered HTTP 401');
    const none = await planWorkflowWithLlm('Echo "x"', undefined, undefined);
    expect(none).toEqual([{ tool: 'text', action: 'echo', input: { text: 'x' } }]);
  });

  it('passes a loop of more than 50 calls through (the orchestrator then fails the task with workflow_depth_exceeded)', async () => {
    answer = () => ({
      status: 200,
      json: completion(Array.from({ length: 51 }, (_, i) => ({ name: 'text__echo', args: { text: String(i) } }))),
    });
    const steps = await planWorkflowWithLlm('echo 0 to 50', undefined, opts());
    expect(steps).toHaveLength(51);
  });

  it('reads its settings from LLM_BASE_URL, LLM_API_KEY and LLM_MODEL', () => {
    expect(llmOptionsFromEnv({ LLM_BASE_URL: 'http://x/v1', LLM_API_KEY: 'k', LLM_MODEL: 'm' })).toEqual({
      baseUrl: 'http://x/v1',
      apiKey: 'k',
      model: 'm',
    });
    expect(llmOptionsFromEnv({ LLM_BASE_URL: 'http://x/v1', LLM_API_KEY: 'k', LLM_MODEL: 'm', LLM_TIMEOUT_MS: '5000' })?.timeoutMs).toBe(
      5000,
    );
    expect(llmOptionsFromEnv({ LLM_BASE_URL: 'http://x/v1', LLM_MODEL: 'm' })).toBeUndefined();
  });
});
