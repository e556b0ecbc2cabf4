import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Receives webhooks; remembers when each task's task.complete arrived, and how long after the
 * state change it announces (the body's `timestamp`, same machine clock); per-path behaviour for fan-out.
 */
export async function startWebhookReceiver() {
  const completeAt = new Map<string, number>();
  const afterStateChangeMs = new Map<string, number>();
  const deliveries: { path: string; at: number; eventId: string; taskId: string }[] = [];
  const failedOnce = new Set<string>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const path = req.url ?? '/';
      const eventId = String(req.headers['webhook-id'] ?? '');
      let body: { event?: string; task_id?: string; timestamp?: string } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        // counted as a delivery all the same
      }
      if (path.startsWith('/fail-once/') && !failedOnce.has(eventId)) {
        failedOnce.add(eventId);
        res.writeHead(500).end();
        return;
      }
      const answer = () => {
        deliveries.push({ path, at: Date.now(), eventId, taskId: body.task_id ?? '' });
        if (body.event === 'task.complete' && body.task_id && !completeAt.has(body.task_id)) {
          completeAt.set(body.task_id, at);
          afterStateChangeMs.set(body.task_id, at - Date.parse(body.timestamp ?? ''));
        }
        res.writeHead(200).end();
      };
      if (path.startsWith('/slow/')) setTimeout(answer, 1000);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    completeAt,
    afterStateChangeMs,
    deliveries,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}
