import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the scripted model answers to one chat-completions request. */
export interface ModelAnswer {
  /** The function calls it makes, in order (`<tool>__<action>` or `refuse`). */
  calls?: { name: string; args: unknown }[];
  /** Text instead of calls. */
  content?: string;
  status?: number;
  /** How long it takes to answer. */
  delayMs?: number;
}

export interface ModelRequest {
  at: number;
  model: string;
  /** The user message: the task's prompt. */
  prompt: string;
  functions: string[];
}

export interface ModelServer {
  /** `http://127.0.0.1:PORT/v1`: what LLM_BASE_URL is set to. */
  baseUrl: string;
  apiKey: string;
  requests: ModelRequest[];
  close(): Promise<void>;
}

/**
 * A scripted OpenAI-compatible model in the test process: `POST /v1/chat/completions` with
 * `Authorization: Bearer <apiKey>`, answered by `script` (given the request's user message) in
 * the chat-completions wire format, tool calls with JSON-string arguments. No network.
 */
export async function startModelServer(script: (prompt: string) => ModelAnswer, apiKey = 'sk-scripted'): Promise<ModelServer> {
  const requests: ModelRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions' || req.headers.authorization !== `Bearer ${apiKey}`) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model: string;
        messages: { role: string; content: string }[];
        tools?: { function: { name: string } }[];
      };
      const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
      requests.push({ at: Date.now(), model: body.model, prompt, functions: (body.tools ?? []).map((t) => t.function.name) });
      const a = script(prompt);
      const calls = a.calls ?? [];
      const completion = {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
            message: {
              role: 'assistant',
              content: a.content ?? null,
              ...(calls.length > 0
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
      };
      const t = setTimeout(() => {
        timers.delete(t);
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(completion));
      }, a.delayMs ?? 0);
      timers.add(t);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    apiKey,
    requests,
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
