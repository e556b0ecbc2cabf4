import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { createMetrics, httpMetrics, mountMetrics, observeCreateBacklog, secondsSince, type Metrics } from './index.js';

/** An app shaped like the services': metrics middleware first, a /v1 router, an error middleware. */
function buildApp(metrics: Metrics): express.Express {
  const app = express();
  app.use(httpMetrics(metrics.httpRequestDuration));
  const v1 = express.Router();
  v1.get('/tasks/:task_id', (req, res) => {
    res.json({ id: req.params['task_id'] });
  });
  v1.post('/tasks/:task_id/cancel', async () => {
    await Promise.resolve();
    throw new Error('boom');
  });
  app.use('/v1', v1);
  mountMetrics(app, metrics.registry);
  const onError: ErrorRequestHandler = (_err, _req, res, _next) => {
    res.status(500).json({ error: { code: 'internal_error' } });
  };
  app.use(onError);
  return app;
}

describe('metrics', () => {
  let server: http.Server;
  let base: string;
  let metrics: Metrics;

  beforeAll(async () => {
    metrics = createMetrics('test-service');
    server = http.createServer(buildApp(metrics));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  async function scrape(): Promise<{ type: string; lines: string[] }> {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    return { type: res.headers.get('content-type') ?? '', lines: (await res.text()).split('\n') };
  }

  it('labels the HTTP histogram with the matched route pattern, not the raw path', async () => {
    const res = await fetch(`${base}/v1/tasks/task_abc123`);
    expect(res.status).toBe(200);
    await res.arrayBuffer();

    const { type, lines } = await scrape();
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    const count = lines.find((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('route="/v1/tasks/:task_id"'));
    expect(count).toBeDefined();
    expect(count).toContain('method="GET"');
    expect(count).toContain('status="200"');
    expect(count).toContain('service="test-service"');
    expect(count).toMatch(/ 1$/);
    expect(lines.some((l) => l.includes('http_request_duration_seconds_bucket{') && l.includes('route="/v1/tasks/:task_id"'))).toBe(true);
    expect(lines.join('\n')).not.toContain('task_abc123');
  });

  it('keeps the route of a handler that failed and was answered by the error middleware', async () => {
    const res = await fetch(`${base}/v1/tasks/task_x/cancel`, { method: 'POST' });
    expect(res.status).toBe(500);
    await res.arrayBuffer();

    const { lines } = await scrape();
    const count = lines.find(
      (l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('route="/v1/tasks/:task_id/cancel"'),
    );
    expect(count).toContain('status="500"');
    expect(count).toContain('method="POST"');
  });

  it('puts requests that matched no route under one (unmatched) label', async () => {
    for (const path of ['/nope/1', '/nope/2']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(404);
      await res.arrayBuffer();
    }
    const { lines } = await scrape();
    const count = lines.find((l) => l.startsWith('http_request_duration_seconds_count{') && l.includes('route="(unmatched)"'));
    expect(count).toContain('status="404"');
    expect(count).toMatch(/ 2$/);
    expect(lines.join('\n')).not.toContain('/nope/');
  });

  it('exports the process metrics and every shared instrument', async () => {
    metrics.tasksTotal.inc({ status: 'complete' });
    metrics.queueConsumeLag.observe({ queue: 'executor.steps' }, 0.2);
    metrics.stepDuration.observe({ tool: 'text', action: 'echo', outcome: 'complete' }, 0.01);
    metrics.webhookAttempts.inc({ outcome: 'delivered' });
    metrics.webhookDeliveryLatency.observe({ outcome: 'delivered' }, 1.5);
    metrics.tokenRefreshes.inc({ outcome: 'refreshed' });
    metrics.createsShed.inc();

    const text = (await scrape()).lines.join('\n');
    for (const name of [
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
      'http_request_duration_seconds',
      'tasks_total',
      'queue_consume_lag_seconds',
      'step_duration_seconds',
      'webhook_attempts_total',
      'webhook_delivery_latency_seconds',
      'token_refreshes_total',
      'creates_shed_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    const series = (prefix: string, label: string) => text.split('\n').find((l) => l.startsWith(`${prefix}{`) && l.includes(label));
    expect(series('tasks_total', 'status="complete"')).toMatch(/ 1$/);
    expect(series('queue_consume_lag_seconds_count', 'queue="executor.steps"')).toMatch(/ 1$/);
  });

  it('reads the create backlog gauges at each scrape', async () => {
    let reading = { waiting: 3, oldestWaitSeconds: 1.25 };
    observeCreateBacklog(metrics, () => reading);
    const value = (text: string, name: string) => text.split('\n').find((l) => l.startsWith(`${name}{`));
    let text = (await scrape()).lines.join('\n');
    expect(value(text, 'creates_awaiting_answer')).toMatch(/ 3$/);
    expect(value(text, 'creates_oldest_wait_seconds')).toMatch(/ 1\.25$/);
    reading = { waiting: 0, oldestWaitSeconds: 0 };
    text = (await scrape()).lines.join('\n');
    expect(value(text, 'creates_awaiting_answer')).toMatch(/ 0$/);
    expect(value(text, 'creates_oldest_wait_seconds')).toMatch(/ 0$/);
  });

  it('gives every service its own registry, so two can live in one process', () => {
    const a = createMetrics('a', { defaultMetrics: false });
    const b = createMetrics('b', { defaultMetrics: false });
    expect(a.registry).not.toBe(b.registry);
    expect(a.registry.getSingleMetric('tasks_total')).toBeDefined();
  });

  it('measures queue lag from occurred_at', () => {
    const now = Date.parse('2026-01-01T00:00:10.000Z');
    expect(secondsSince('2026-01-01T00:00:07.500Z', now)).toBe(2.5);
    expect(secondsSince('2026-01-01T00:00:11.000Z', now)).toBe(0);
    expect(secondsSince('not a date', now)).toBe(0);
  });
});
