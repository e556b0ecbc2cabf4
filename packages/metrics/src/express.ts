import type { IRouter, Request, RequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { Metrics } from './metrics.js';

/** The route label of a request that matched no route (404s, probes of unknown paths). */
export const UNMATCHED_ROUTE = '(unmatched)';
/** The status label of a request whose client went away before the answer was sent. */
export const CLIENT_CLOSED = '499';

/**
 * Observes `http_request_duration_seconds` for every request. Mount it first, before the
 * routers. The route label is the pattern of the route that handled the request
 * (`/v1/tasks/:task_id`), never the raw path, so ids do not multiply the series.
 *
 * The pattern is taken at the moment the router matches a route (when express assigns
 * `req.route`), together with the router's base URL at that moment; an error that unwinds
 * the routers before the answer keeps the route it came from. Routers must be mounted at
 * static paths (`app.use('/v1', v1)`): a mount path with parameters would put its concrete
 * values in the label.
 */
export function httpMetrics(histogram: Metrics['httpRequestDuration']): RequestHandler {
  return (req, res, next) => {
    const stop = histogram.startTimer();
    const matched = captureRoute(req);
    let observed = false;
    const observe = (status: string) => {
      if (observed) return;
      observed = true;
      stop({ method: req.method, route: matched.route ?? UNMATCHED_ROUTE, status });
    };
    res.once('finish', () => observe(String(res.statusCode)));
    res.once('close', () => observe(res.writableFinished ? String(res.statusCode) : CLIENT_CLOSED));
    next();
  };
}

/** Adds `GET /metrics` (Prometheus text format) to an app or router: the ops server's `extend` hook. */
export function mountMetrics(app: IRouter, registry: Registry): void {
  app.get('/metrics', (_req, res, next) => {
    registry.metrics().then((text) => {
      res.setHeader('Content-Type', registry.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(text);
    }, next);
  });
}

/** Watches assignments of `req.route` and keeps the latest matched pattern with its base URL. */
function captureRoute(req: Request): { route: string | undefined } {
  const matched: { route: string | undefined } = { route: undefined };
  let current: unknown = undefined;
  Object.defineProperty(req, 'route', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (value: unknown) => {
      current = value;
      const pattern = routePattern(value);
      if (pattern !== undefined) matched.route = joinPath(req.baseUrl, pattern);
    },
  });
  return matched;
}

function routePattern(route: unknown): string | undefined {
  if (route === null || typeof route !== 'object' || !('path' in route)) return undefined;
  const path: unknown = route.path;
  if (typeof path === 'string') return path;
  if (Array.isArray(path)) return path.map(String).join('|');
  return path instanceof RegExp ? path.source : undefined;
}

function joinPath(base: string, path: string): string {
  if (!base) return path;
  if (path === '/' || path === '') return base;
  return `${base}${path.startsWith('/') ? '' : '/'}${path}`;
}
