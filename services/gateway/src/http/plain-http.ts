import express from 'express';
import type { Logger } from '@tes/logger';
import { AppError } from '@tes/errors';
import { errorMiddleware, requestId } from '@tes/http';

/**
 * The plain-HTTP listener: every request gets 403 https_required and touches
 * nothing, except requests a trusted TLS-terminating proxy forwarded as https.
 */
export function createPlainHttpApp(api: express.Express, trustedProxies: readonly string[], logger: Logger): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((req, res, next) => {
    const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
    if (trustedProxies.includes(peer) && req.get('x-forwarded-proto') === 'https') {
      api(req, res, next);
      return;
    }
    next();
  });
  app.use(requestId());
  app.use((_req, _res, next) => next(new AppError('https_required', 'HTTPS is required; plain HTTP requests are rejected')));
  app.use(errorMiddleware(logger));
  return app;
}
