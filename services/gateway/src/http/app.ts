import express, { type RequestHandler } from 'express';
import type { Logger } from '@tes/logger';
import type { Broker } from '@tes/messaging';
import { errorMiddleware, methods, notFound, requestId, requestLog } from '@tes/http';
import type { AccountRepository } from '../store/account.repository.js';
import type { CredentialsSource } from '../domain/credentials-cache.js';
import type { LastUsedThrottle } from '../domain/last-used.js';
import { CreateBacklog } from '../domain/create-backlog.js';
import type { IdempotencyRepository } from '../store/idempotency.repository.js';
import type { RateLimitRepository } from '../store/rate-limit.repository.js';
import type { TaskViewRepository } from '../store/task-view.repository.js';
import { buildOpenApiDocument } from '../openapi/openapi.js';
import { authenticate, type AuthContext } from './auth.js';
import { rateLimit } from './rate-limit.js';
import { shedWhenBacklogged } from './shed.js';
import { createTaskRoute } from './routes/tasks/create-task.route.js';
import { getTaskRoute } from './routes/tasks/get-task.route.js';
import { listTasksRoute } from './routes/tasks/list-tasks.route.js';
import { cancelTaskRoute } from './routes/tasks/cancel-task.route.js';
import { getTraceRoute } from './routes/tasks/get-trace.route.js';
import { listConnectionsRoute } from './routes/users/list-connections.route.js';
import { createSettingsLinkRoute } from './routes/users/create-settings-link.route.js';
import { revokeConnectionRoute } from './routes/users/revoke-connection.route.js';
import { deleteToolRoute } from './routes/tools/delete-tool.route.js';
import { getToolRoute, listToolsRoute } from './routes/tools/list-tools.route.js';
import { registerToolRoute } from './routes/tools/register-tool.route.js';
import { createDashboard, type DashboardOptions } from '../dashboard/index.js';

export interface AppDeps {
  broker: Broker;
  accounts: AccountRepository;
  /** Where requests' keys and accounts are read: the replica's CredentialsCache; the repository when absent. */
  credentials?: CredentialsSource;
  /** Records when each key was last used (throttled); nothing is recorded when absent. */
  lastUsed?: Pick<LastUsedThrottle, 'touch'>;
  views: TaskViewRepository;
  rateLimits: RateLimitRepository;
  idempotencyKeys: IdempotencyRepository;
  logger: Logger;
  requestTimeoutMs: number;
  /** How long a create waits for the orchestrator (covers an LLM planner's call); requestTimeoutMs when absent. */
  createTimeoutMs?: number;
  bodyLimitBytes: number;
  /** How long an in-progress Idempotency-Key record is believed before it counts as abandoned. */
  idempotencyLeaseMs: number;
  /** Records HTTP latency by matched route (composition.ts passes @tes/metrics' middleware). */
  httpMetrics?: express.RequestHandler;
  /** The account owners' dashboard under /dashboard (HTML; its own session, CSRF and headers). */
  dashboard?: DashboardOptions;
  /** Sheds an account's creates while they queue (composition.ts: CREATE_SHED_AFTER_MS); absent, none is shed. */
  createBacklog?: CreateBacklog;
  /** Called for each create shed (composition.ts counts them: creates_shed_total). */
  onCreateShed?: () => void;
}

/**
 * The public API. Builds the app; never listens (composition.ts and tests do).
 *
 * Order on every API route: routing (unknown path 404, wrong method 405 with
 * Allow) → authentication (401/403) → rate limit (counts the request, sets
 * X-RateLimit-*) → body parsing (413, malformed JSON) → validation → the handler.
 * So nothing of an unauthenticated request is read beyond its headers. A create is
 * also shed (503) between authentication and the rate limit while its account's
 * creates queue.
 */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true); // spec 2.6: paths and parameters are case-sensitive
  app.set('query parser', 'simple');
  if (deps.httpMetrics) app.use(deps.httpMetrics);
  app.use(requestId());
  // One line per request once answered; the account once authentication has found it.
  app.use(requestLog(deps.logger, { accountId: (res) => (res.locals['auth'] as AuthContext | undefined)?.account._id }));

  const authenticated = authenticate(deps.credentials ?? deps.accounts, deps.lastUsed);
  const counted: RequestHandler[] = [
    rateLimit(deps.rateLimits),
    // JSON bodies only; validBody() answers 400 for another Content-Type.
    express.json({ limit: deps.bodyLimitBytes, strict: false }),
  ];
  const api = (h: RequestHandler): RequestHandler[] => [authenticated, ...counted, h];
  const backlog = deps.createBacklog ?? new CreateBacklog(0);

  const upstream = { broker: deps.broker, views: deps.views, timeoutMs: deps.requestTimeoutMs };
  const idempotency = { keys: deps.idempotencyKeys, leaseMs: deps.idempotencyLeaseMs };
  const openapi = JSON.stringify(buildOpenApiDocument());

  const v1 = express.Router({ caseSensitive: true, strict: false });
  v1.all(
    '/openapi.json',
    methods({
      get: (_req, res) => {
        res.type('application/json').send(openapi);
      },
    }),
  );
  v1.all(
    '/tasks',
    methods({
      post: [
        authenticated,
        shedWhenBacklogged(backlog, deps.onCreateShed),
        ...counted,
        createTaskRoute({ ...upstream, timeoutMs: deps.createTimeoutMs ?? deps.requestTimeoutMs, idempotency, backlog }),
      ],
      get: api(listTasksRoute(deps.views)),
    }),
  );
  v1.all('/tasks/:task_id', methods({ get: api(getTaskRoute(upstream)) }));
  v1.all('/tasks/:task_id/cancel', methods({ post: api(cancelTaskRoute(upstream)) }));
  v1.all('/tasks/:task_id/trace', methods({ get: api(getTraceRoute(upstream)) }));
  v1.all('/users/:user_id/connections', methods({ get: api(listConnectionsRoute(upstream)) }));
  v1.all('/users/:user_id/connections/:service', methods({ delete: api(revokeConnectionRoute(upstream)) }));
  v1.all('/users/:user_id/settings_link', methods({ post: api(createSettingsLinkRoute(upstream)) }));
  v1.all('/tools', methods({ post: api(registerToolRoute(upstream)), get: api(listToolsRoute(upstream)) }));
  v1.all('/tools/:name', methods({ get: api(getToolRoute(upstream)), delete: api(deleteToolRoute(upstream)) }));
  app.use('/v1', v1);
  if (deps.dashboard) app.use('/dashboard', createDashboard(deps, deps.dashboard));

  app.use(notFound());
  app.use(errorMiddleware(deps.logger));
  return app;
}
