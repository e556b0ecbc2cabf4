import type { RequestHandler, Response } from 'express';
import { html } from '@tes/html';
import type { DashboardDeps } from '../deps.js';
import { DashError } from '../errors.js';
import { href, type DashCtx } from '../layout.js';
import { webhooksPage, type WebhooksView } from '../pages/webhooks.page.js';
import { bodyField, ctxOf, doneFlash, redirect, scopeOf, send } from '../request.js';
import type { DashboardUpstream } from '../upstream.js';

type WebhooksDeps = Pick<DashboardDeps, 'upstream' | 'logger'>;

/** The endpoint, secret and delivery log; a dispatcher that does not answer is shown, not thrown. */
async function webhooksView(upstream: DashboardUpstream, ctx: DashCtx, extra: Partial<WebhooksView> = {}): Promise<WebhooksView> {
  const scope = scopeOf(ctx);
  const [got, log] = await Promise.allSettled([upstream.webhook(scope), upstream.webhookDeliveries(scope, { limit: 25 })]);
  if (got.status === 'rejected') {
    const err = got.reason as unknown;
    if (!(err instanceof DashError)) throw err;
    return { endpoint: null, secret: null, deliveries: null, unavailable: err.message, ...extra };
  }
  return {
    endpoint: got.value.endpoint,
    secret: got.value.secret,
    deliveries: log.status === 'fulfilled' ? log.value : null,
    ...extra,
  };
}

/** Runs a webhook action; a refusal re-renders the page with the reason next to the form. */
async function webhookAction(
  upstream: DashboardUpstream,
  res: Response,
  action: () => Promise<void>,
  keep: Partial<WebhooksView> = {},
): Promise<void> {
  const ctx = ctxOf(res);
  try {
    await action();
  } catch (err) {
    if (!(err instanceof DashError) || err.status >= 500) throw err;
    const view = await webhooksView(upstream, ctx, {
      ...keep,
      flash: { kind: 'err', title: err.status === 404 ? 'Not found' : 'Not saved', text: ` ${err.message}` },
    });
    send(res, webhooksPage(ctx, view), err.status);
  }
}

/** GET /dashboard/webhooks */
export function webhooksRoute(deps: WebhooksDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    send(res, webhooksPage(ctx, await webhooksView(deps.upstream, ctx, { flash: doneFlash(req) })));
  };
}

/** POST /dashboard/webhooks/endpoint: the environment's endpoint URL (the dispatcher checks it). */
export function setEndpointRoute(deps: WebhooksDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const url = bodyField(req, 'url').trim();
    await webhookAction(
      deps.upstream,
      res,
      async () => {
        if (!url) throw new DashError(400, 'Not accepted', 'Enter the URL of your webhook endpoint.');
        if (url.length > 2048) throw new DashError(400, 'Not accepted', 'The URL is too long (2048 characters at most).');
        // The database cannot store a NUL: refused here rather than waiting for the dispatcher's answer to time out.
        if (url.includes('\u0000')) throw new DashError(400, 'Not accepted', 'The URL holds a NUL character.');
        await deps.upstream.setWebhookEndpoint(scopeOf(ctx), url);
        deps.logger.info('dashboard: webhook endpoint set', { account_id: ctx.account._id, environment: ctx.env });
        redirect(res, href('/webhooks', { env: ctx.env, done: 'endpoint_saved' }));
      },
      { urlInput: url },
    );
  };
}

/** POST /dashboard/webhooks/secret/reveal */
export function revealSecretRoute(deps: WebhooksDeps): RequestHandler {
  return async (_req, res) => {
    const ctx = ctxOf(res);
    const r = await deps.upstream.webhook(scopeOf(ctx), { revealSecret: true });
    deps.logger.info('dashboard: webhook secret revealed', { account_id: ctx.account._id, environment: ctx.env });
    const view = await webhooksView(deps.upstream, ctx);
    send(res, webhooksPage(ctx, { ...view, ...(r.secret?.value ? { revealed: r.secret.value } : {}) }));
  };
}

/** POST /dashboard/webhooks/secret/rotate: the new secret shown; the old one signs too for a while. */
export function rotateSecretRoute(deps: WebhooksDeps): RequestHandler {
  return async (_req, res) => {
    const ctx = ctxOf(res);
    const secret = await deps.upstream.rotateWebhookSecret(scopeOf(ctx));
    deps.logger.info('dashboard: webhook secret rotated', { account_id: ctx.account._id, environment: ctx.env, version: secret.version });
    const view = await webhooksView(deps.upstream, ctx);
    const text = secret.previous_valid_until
      ? html` Deliveries are signed with both secrets until ${secret.previous_valid_until.slice(0, 16).replace('T', ' ')} UTC; update your
        receiver before then.`
      : html` Update your receiver.`;
    send(
      res,
      webhooksPage(ctx, {
        ...view,
        revealed: secret.value,
        flash: { kind: 'ok', title: `Secret rotated (version ${secret.version})`, text },
      }),
    );
  };
}

/** POST /dashboard/webhooks/test: a test event through the real delivery path. */
export function sendTestRoute(deps: WebhooksDeps): RequestHandler {
  return async (_req, res) => {
    const ctx = ctxOf(res);
    await webhookAction(deps.upstream, res, async () => {
      await deps.upstream.sendTestEvent(scopeOf(ctx));
      redirect(res, href('/webhooks', { env: ctx.env, done: 'test_sent' }));
    });
  };
}
