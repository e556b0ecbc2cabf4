import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookEvent } from '../types.js';
import { webhookMiddleware, type WebhookMiddlewareOptions, type WebhookRequest } from './middleware.js';

export interface WebhookListenerOptions extends Omit<WebhookMiddlewareOptions, 'onRejected'> {
  /** 0 picks a free port. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Every verified event (answered 200 after this returns). */
  onEvent: (event: WebhookEvent, meta: { webhookId: string | undefined; path: string }) => void;
  /** Every refused request (answered 400/401/405/413/500). */
  onRejected?: (info: { status: number; code: string; message: string; path: string }) => void;
}

export interface WebhookListener {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A local webhook receiver on node:http (what `tes webhooks listen` runs): POST on any path,
 * verified by {@link webhookMiddleware}; 200 for a verified event, 401/400/413 otherwise,
 * 405 for other methods.
 */
export async function startWebhookListener(options: WebhookListenerOptions): Promise<WebhookListener> {
  const verify = webhookMiddleware({
    ...options,
    onRejected: (r, req) => options.onRejected?.({ ...r, path: req.url ?? '/' }),
  });
  const fail = (res: http.ServerResponse, path: string, status: number, code: string, message: string) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...(status === 405 ? { Allow: 'POST' } : {}) });
    res.end(JSON.stringify({ error: { code, message } }));
    options.onRejected?.({ status, code, message, path });
  };
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (req.method !== 'POST') return fail(res, path, 405, 'method_not_allowed', 'webhooks are POSTed');
    verify(req, res, (err) => {
      if (err !== undefined) return fail(res, path, 500, 'internal_error', messageOf(err));
      try {
        const verified = req as WebhookRequest;
        options.onEvent(verified.webhookEvent as WebhookEvent, { webhookId: verified.webhookId, path });
      } catch (e) {
        return fail(res, path, 500, 'internal_error', messageOf(e));
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{"received":true}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}
