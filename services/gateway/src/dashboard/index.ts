import type { Connection } from 'mongoose';
import type express from 'express';
import { clientAddressOf } from '@tes/http';
import type { Logger } from '@tes/logger';
import type { Broker } from '@tes/messaging';
import type { Config } from '../config.js';
import type { AccountStore } from '../domain/account.js';
import type { TaskViewReader } from '../domain/task-view.js';
import type { OwnerStore, SessionStore, UsageStats } from './ports.js';
import { SessionKeys, dashboardSessionSecret } from './session.js';
import { OwnerRepository } from './store/owner.repository.js';
import { DashboardSessionRepository } from './store/session.repository.js';
import { UsageReader } from './store/usage.reader.js';
import { DashboardUpstream } from './upstream.js';

/**
 * The account owners' dashboard, mounted by createApp under /dashboard on the HTTPS listener.
 * What it owns: the `owners`, `signin_failures` and `dashboard_sessions` collections; everything else it reads or
 * asks through the same repositories and messages as the API.
 */
export interface DashboardOptions {
  owners: OwnerStore;
  usage: UsageStats;
  sessions: SessionStore;
  /** DASHBOARD_SESSION_SECRET (or a per-process one in development). */
  sessionSecret: string;
  /** TRUSTED_PROXIES: whose X-Forwarded-For names the client address the lock-out counts. */
  trustedProxies: readonly string[];
}

/** Registers the dashboard's collections on the gateway's connection (call before ensureIndexes). */
export function dashboardOptions(
  conn: Connection,
  logger: Logger,
  trustedProxies: readonly string[],
  config: Pick<Config, 'DASHBOARD_SESSION_SECRET' | 'NODE_ENV'>,
) {
  return {
    owners: new OwnerRepository(conn),
    usage: new UsageReader(conn),
    sessions: new DashboardSessionRepository(conn),
    sessionSecret: dashboardSessionSecret(config, logger),
    trustedProxies,
  } satisfies DashboardOptions;
}

/**
 * The dashboard's handler. Its router (pages, styles, forms) is loaded on the first dashboard
 * request: a gateway that only serves the API never holds it in memory.
 */
export function createDashboard(
  deps: { broker: Broker; accounts: AccountStore; views: TaskViewReader; logger: Logger; requestTimeoutMs: number },
  options: DashboardOptions,
): express.RequestHandler {
  let router: Promise<express.Router> | undefined;
  return (req, res, next) => {
    router ??= import('./router.js').then(({ dashboardRouter }) =>
      dashboardRouter({
        accounts: deps.accounts,
        views: deps.views,
        logger: deps.logger,
        upstream: new DashboardUpstream(deps.broker, deps.requestTimeoutMs),
        owners: options.owners,
        usage: options.usage,
        sessions: options.sessions,
        clientAddress: clientAddressOf(options.trustedProxies),
        keys: new SessionKeys(options.sessionSecret),
      }),
    );
    router.then((r) => r(req, res, next), next);
  };
}
