import type { RequestHandler } from 'express';
import type { DashboardDeps } from '../deps.js';
import { DashError } from '../errors.js';
import { href } from '../layout.js';
import { deliveryPage } from '../pages/delivery.page.js';
import { bodyField, ctxOf, doneFlash, paramField, redirect, scopeOf, send } from '../request.js';

type DeliveryDeps = Pick<DashboardDeps, 'upstream' | 'logger'>;

/** A webhook id as the dispatcher makes them (`evt_…`). */
const EVENT_ID = /^evt_[A-Za-z0-9_.:-]{1,200}$/;

const noSuchEvent = () => new DashError(404, 'Event not found', 'There is no such webhook event in this environment.');

/** GET /dashboard/webhooks/events/:event_id: the attempt inspector. */
export function deliveryRoute(deps: DeliveryDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const id = paramField(req, 'event_id');
    if (!EVENT_ID.test(id)) throw noSuchEvent();
    const d = await deps.upstream.delivery(scopeOf(ctx), id);
    send(res, deliveryPage(ctx, { d, flash: doneFlash(req) }));
  };
}

/** POST /dashboard/webhooks/resend: "Resend now" for any event; back to its inspector, which shows what happened. */
export function resendRoute(deps: DeliveryDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const id = bodyField(req, 'event_id');
    if (!EVENT_ID.test(id)) throw noSuchEvent();
    const effect = await deps.upstream.resend(scopeOf(ctx), id);
    deps.logger.info('dashboard: webhook event resent', { account_id: ctx.account._id, environment: ctx.env, event_id: id, effect });
    redirect(res, href(`/webhooks/events/${id}`, { env: ctx.env, done: `resent_${effect}` }));
  };
}
