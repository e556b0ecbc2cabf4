import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ensureIndexes } from '@tes/store';
import { waitFor } from '@tes/testing';
import { StepClaimRepository } from '../store/step-claim.repository.js';
import { startHarness, type Harness } from '../test-support/harness.js';
import { DEFAULT_SETTINGS, type EngineSettings } from '../tools/tool.js';
import { runStep } from './run-step.use-case.js';

/**
 * The per-step timeout (`timeout_ms` of step.run, the orchestrator's STEP_TIMEOUT_MS): an
 * `http.fetch` step against a real local HTTP server that never answers. The http tool's own
 * request timeout is set far longer, so only the step timeout can end the step.
 */
describe('runStep: a step that outlives its timeout', () => {
  let h: Harness;
  let claims: StepClaimRepository;
  let server: http.Server;
  let base: string;
  /** Each request the server saw: when it arrived, and when the client went away (never answered). */
  const seen: { path: string; at: number; closedAt?: number }[] = [];

  /** Long enough that the http tool's own timeout (service_unavailable) cannot be what ends the step. */
  const settings: Partial<EngineSettings> = { http: { ...DEFAULT_SETTINGS.http, allowHosts: ['127.0.0.1'], timeoutMs: 30_000 } };

  beforeAll(async () => {
    h = await startHarness({ broker: false });
    claims = new StepClaimRepository(h.mongo);
    await ensureIndexes(h.mongo);
    server = http.createServer((req, res) => {
      const entry: (typeof seen)[number] = { path: req.url ?? '', at: Date.now() };
      seen.push(entry);
      res.on('close', () => (entry.closedAt = Date.now()));
      // /hang/…: never answered. /quick/…: answered after 100 ms.
      if (entry.path.startsWith('/quick/'))
        setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 100);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await h?.close();
  });

  it('fails the step with step_timeout (recoverable) once timeout_ms has passed, aborts the request, and records it once', async () => {
    const url = `${base}/hang/${Date.now()}`;
    const step = h.step({ tool: 'http', action: 'fetch', input: { url }, timeout_ms: 600 });
    const started = Date.now();
    const result = await runStep(step, { ...h.deps(settings), claims });
    const elapsed = Date.now() - started;

    expect(result).toMatchObject({
      task_id: step.task_id,
      step_index: 0,
      outcome: 'failed',
      error: {
        code: 'step_timeout',
        message: 'http.fetch did not finish within 600 ms',
        tool: 'http',
        recoverable: true,
        suggestion: 'The web server took longer than 1 s to answer; retry the task',
      },
    });
    expect(result?.output).toBeUndefined();
    // Ended by the step's timeout: not before it, and long before the http tool's own 30 s.
    expect(result?.duration_ms).toBeGreaterThanOrEqual(590);
    expect(elapsed).toBeGreaterThanOrEqual(590);
    expect(elapsed).toBeLessThan(5000);

    // The request really reached the server, and the timeout aborted it: the connection was closed by the executor.
    const hits = seen.filter((s) => s.path === new URL(url).pathname);
    expect(hits).toHaveLength(1);
    const closedAt = await waitFor(() => hits[0]?.closedAt, { what: 'the hanging request to be aborted', timeoutMs: 3000 });
    expect(closedAt - started).toBeLessThan(3000);

    // Recorded as a failed step in the trace, with the reason.
    const doc = await h.steps.find(step.idempotency_key);
    expect(doc?.trace).toEqual({
      tool: 'http',
      action: 'fetch',
      status: 'failed',
      duration_ms: result?.duration_ms,
      note: 'http.fetch did not finish within 600 ms',
    });

    // A redelivery of the same step.run answers the recorded failure without calling the server again.
    const again = await runStep(step, { ...h.deps(settings), claims });
    expect(again).toEqual(result);
    expect(seen.filter((s) => s.path === new URL(url).pathname)).toHaveLength(1);
  });

  it('lets a step that answers within its timeout complete (the same timeout, a server that answers in 100 ms)', async () => {
    const url = `${base}/quick/${Date.now()}`;
    const result = await runStep(h.step({ tool: 'http', action: 'fetch', input: { url }, timeout_ms: 600 }), {
      ...h.deps(settings),
      claims,
    });
    expect(result).toMatchObject({ outcome: 'complete', output: { status: 200, json: { ok: true } } });
  });
});
