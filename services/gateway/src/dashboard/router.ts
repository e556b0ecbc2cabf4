import express from 'express';
import { DASHBOARD_CSS, ICON_SVG } from './assets.js';
import type { DashboardDeps } from './deps.js';
import { errorPages, pageNotFound } from './error-pages.js';
import { securityHeaders } from './security-headers.js';
import { requireSession } from './session-gate.js';
import { assetRoute } from './routes/assets.route.js';
import { connectionsRoute, revokeConnectionRoute } from './routes/connections.route.js';
import { deliveryRoute, resendRoute } from './routes/deliveries.route.js';
import { createKeyRoute, keysRoute, revokeKeyRoute, rollKeyRoute } from './routes/keys.route.js';
import { homeRoute, signInFormRoute, signInRoute, signOutRoute } from './routes/sign-in.route.js';
import { taskRoute, tasksRoute } from './routes/tasks.route.js';
import { usageRoute } from './routes/usage.route.js';
import { revealSecretRoute, rotateSecretRoute, sendTestRoute, setEndpointRoute, webhooksRoute } from './routes/webhooks.route.js';

/** The dashboard's pages under /dashboard: one route file per page (routes/), rendered by pages/. */
export function dashboardRouter(deps: DashboardDeps): express.Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  router.use(securityHeaders);
  router.get('/assets/dashboard.css', assetRoute('text/css', DASHBOARD_CSS));
  router.get('/assets/icon.svg', assetRoute('image/svg+xml', ICON_SVG));
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));

  router.get('/', homeRoute(deps));
  router.get('/sign-in', signInFormRoute(deps));
  router.post('/sign-in', signInRoute(deps));

  // Everything below needs a session; every POST needs its CSRF token.
  router.use(requireSession(deps));
  router.post('/sign-out', signOutRoute(deps));

  router.get('/keys', keysRoute(deps));
  router.post('/keys', createKeyRoute(deps));
  router.post('/keys/:key_id/roll', rollKeyRoute(deps));
  router.post('/keys/:key_id/revoke', revokeKeyRoute(deps));

  router.get('/webhooks', webhooksRoute(deps));
  router.post('/webhooks/endpoint', setEndpointRoute(deps));
  router.post('/webhooks/secret/reveal', revealSecretRoute(deps));
  router.post('/webhooks/secret/rotate', rotateSecretRoute(deps));
  router.post('/webhooks/test', sendTestRoute(deps));
  router.get('/webhooks/events/:event_id', deliveryRoute(deps));
  router.post('/webhooks/resend', resendRoute(deps));

  router.get('/tasks', tasksRoute(deps));
  router.get('/tasks/:task_id', taskRoute(deps));

  router.get('/connections', connectionsRoute(deps));
  router.post('/connections/revoke', revokeConnectionRoute(deps));

  router.get('/usage', usageRoute(deps));

  router.use(pageNotFound);
  router.use(errorPages(deps.logger));
  return router;
}
