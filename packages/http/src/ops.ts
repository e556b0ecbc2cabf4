import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Logger } from '@tes/logger';
import { listen } from './listen.js';

export interface OpsServerOptions {
  port: number;
  host?: string;
  /** Ready = connected to its dependencies and taking work. */
  ready: () => boolean;
  logger: Logger;
  extend?: (app: express.Express) => void;
}

/**
 * /healthz (the process is alive) and /readyz (it can take work) on a private port.
 * Rejects with a ListenError naming OPS_PORT when the port cannot be taken.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<http.Server> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', (_req, res) => {
    const ready = options.ready();
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready' });
  });
  options.extend?.(app);
  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await listen(server, options.port, options.host ?? '127.0.0.1', 'OPS_PORT');
  options.logger.info('ops server listening', { port: (server.address() as AddressInfo).port });
  return server;
}

export function closeServer(server: http.Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    // A connection busy now goes idle once its answer is sent, and keep-alive would then hold it
    // (and the close) open for its whole timeout: close idle ones again until none is left.
    const sweep = setInterval(() => server.closeIdleConnections(), CLOSE_SWEEP_MS);
    sweep.unref();
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** How soon a keep-alive connection is closed after its last answer, once the server is closing. */
const CLOSE_SWEEP_MS = 50;

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0 (or 1 if stopping failed or
 * took longer than `timeoutMs`).
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, timeoutMs = 15_000): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    const timer = setTimeout(() => {
      logger.error('shutdown timed out');
      process.exit(1);
    }, timeoutMs);
    timer.unref();
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
