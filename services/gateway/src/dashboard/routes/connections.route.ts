import type { RequestHandler, Response } from 'express';
import type { ConnectionView } from '@tes/contracts';
import type { DashboardDeps } from '../deps.js';
import { DashError } from '../errors.js';
import { href, type Flash } from '../layout.js';
import { connectionsPage } from '../pages/connections.page.js';
import { bodyField, ctxOf, doneFlash, queryField, redirect, scopeOf, send } from '../request.js';

type ConnectionsDeps = Pick<DashboardDeps, 'usage' | 'upstream'>;

/** The page with the recent end users and, once one is chosen, their connections (or why they cannot be shown). */
async function renderConnections(deps: ConnectionsDeps, res: Response, userId: string, f: Flash | null, status = 200): Promise<void> {
  const ctx = ctxOf(res);
  const users = await deps.usage.recentUserIds(ctx.account._id, ctx.env).catch(() => []);
  let connections: ConnectionView[] | null = null;
  let error: string | undefined;
  if (userId) {
    try {
      connections = await deps.upstream.connections(scopeOf(ctx), userId);
    } catch (err) {
      if (!(err instanceof DashError)) throw err;
      error = err.message;
    }
  }
  send(res, connectionsPage(ctx, { userId, users, connections, ...(error ? { error } : {}), flash: f }), status);
}

/** GET /dashboard/connections(?user_id=) */
export function connectionsRoute(deps: ConnectionsDeps): RequestHandler {
  return async (req, res) => {
    const userId = queryField(req, 'user_id').trim();
    if (userId.length > 256) throw new DashError(400, 'Not accepted', 'A user_id has at most 256 characters.');
    await renderConnections(deps, res, userId, doneFlash(req));
  };
}

/** POST /dashboard/connections/revoke: the vault revokes the tokens at the provider and deletes them. */
export function revokeConnectionRoute(deps: ConnectionsDeps & Pick<DashboardDeps, 'logger'>): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const userId = bodyField(req, 'user_id');
    const service = bodyField(req, 'service');
    if (!userId || userId.length > 256 || !service || service.length > 256)
      throw new DashError(400, 'Not accepted', 'Choose a user and a service.');
    try {
      await deps.upstream.revokeConnection(scopeOf(ctx), userId, service);
    } catch (err) {
      if (!(err instanceof DashError) || err.status >= 500) throw err;
      return renderConnections(
        deps,
        res,
        userId,
        { kind: 'err', title: 'Not revoked', text: ` ${userId} has no ${service} connection.` },
        err.status,
      );
    }
    deps.logger.info('dashboard: connection revoked', { account_id: ctx.account._id, environment: ctx.env, service });
    redirect(res, href('/connections', { env: ctx.env, user_id: userId, done: 'connection_revoked' }));
  };
}
