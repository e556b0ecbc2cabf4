import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { requestId } from '@tes/http';
import type { VaultDeps } from '../domain/deps.js';
import { contentSecurityPolicy, messagePage } from './pages.js';
import { publicRateLimit } from './rate-limit.js';
import { oauthCallbackRoute } from './routes/oauth-callback.route.js';
import { consentContinueRoute, consentPageRoute, legacyStartRoute } from './routes/oauth-consent.route.js';
import { sandboxConsentRoutes } from './routes/sandbox-consent.route.js';
import { settingsPageRoute, settingsReconnectRoute, settingsRevokeRoute } from './routes/settings.route.js';

/** Headers of every page: no caching, no framing (clickjacking on Revoke), no referrer (the links carry tokens). */
const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Content-Security-Policy', contentSecurityPolicy());
  next();
};

/** The public app (consent page and callback, settings page). Builds it; never listens (tests use port 0). */
export function createApp(deps: VaultDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(requestId());
  app.use(securityHeaders);
  app.use(publicRateLimit(deps.settings));
  app.get('/oauth/consent/:token', consentPageRoute(deps));
  app.post('/oauth/consent', express.urlencoded({ extended: false, limit: '16kb' }), consentContinueRoute(deps));
  app.get('/oauth/start/:id', legacyStartRoute);
  app.get('/oauth/callback', oauthCallbackRoute(deps));
  app.use(sandboxConsentRoutes(deps));
  app.get('/settings', settingsPageRoute(deps));
  app.post('/settings/revoke', express.urlencoded({ extended: false, limit: '16kb' }), settingsRevokeRoute(deps));
  app.get('/settings/reconnect', settingsReconnectRoute(deps));
  app.use((_req, res) => {
    res
      .status(404)
      .type('html')
      .send(messagePage('warn', 'Page not found', ['There is nothing here.']));
  });
  const onError: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    deps.logger.error('page failed', {
      // The route, not the path: a consent link's path is its token.
      path: (req.route as { path?: string } | undefined)?.path ?? req.path.slice(0, 16),
      request_id: res.locals['requestId'],
      error: err instanceof Error ? err.message : String(err),
    });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res
      .status(500)
      .type('html')
      .send(messagePage('err', 'Something went wrong', ['Please try again in a moment.']));
  };
  app.use(onError);
  return app;
}
