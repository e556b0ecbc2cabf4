import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import {
  ENVIRONMENTS,
  TASK_STATUSES,
  type ConnectionView,
  type Environment,
  type MessageDataMap,
  type RequestType,
  type TaskStatus,
  type TaskTrace,
  type WebhookDeliveriesReply,
  type WebhookDeliveryInfo,
  type WebhookGetReply,
  type WebhookRotateReply,
} from '@tes/contracts';
import type { IncomingMessage } from 'node:http';
import { addressKey } from '@tes/http';
import type { Logger } from '@tes/logger';
import { BrokerUnavailableError, RequestTimeoutError, type Broker } from '@tes/messaging';
import type { AccountRepository } from '../store/account.repository.js';
import type { TaskViewRepository } from '../store/task-view.repository.js';
import { currentWaiting } from '../http/waiting.js';
import { concurrentTasks, requestsPerMinute, retryAfterSeconds } from '../domain/rate-window.js';
import { ASSET_VERSION, DASHBOARD_CSS, ICON_SVG } from './assets.js';
import { html } from './html.js';
import { createKey, listKeys, revokeKey, rotateKey } from './keys.js';
import { href, type DashCtx, type Flash, type Tab } from './layout.js';
import { MAX_FAILURES, lockState, signInGate, waitText } from './lockout.js';
import { decoyHash, verifyPassword } from './password.js';
import {
  PRESESSION_COOKIE,
  SESSION_COOKIE,
  SESSION_TTL_S,
  clearCookie,
  hostCookie,
  parseCookies,
  passwordFingerprint,
  presessionBinding,
  sessionBinding,
  type SessionKeys,
} from './session.js';
import { EMAIL_PATTERN, type OwnerRepository } from './store/owner.repository.js';
import type { DashboardSessionRepository } from './store/session.repository.js';
import type { UsageReader } from './store/usage.reader.js';
import { connectionsPage } from './pages/connections.page.js';
import { errorPage } from './pages/error.page.js';
import { keysPage, type NewKey } from './pages/keys.page.js';
import { signInPage } from './pages/sign-in.page.js';
import { taskPage, tasksPage, type TaskFilters } from './pages/tasks.page.js';
import { usagePage } from './pages/usage.page.js';
import { webhooksPage, type WebhooksView } from './pages/webhooks.page.js';

export interface DashboardDeps {
  broker: Broker;
  accounts: AccountRepository;
  views: TaskViewRepository;
  owners: OwnerRepository;
  usage: UsageReader;
  sessions: DashboardSessionRepository;
  /** The client's address (the socket's, or X-Forwarded-For from a trusted proxy). */
  clientAddress: (req: IncomingMessage) => string;
  keys: SessionKeys;
  logger: Logger;
  requestTimeoutMs: number;
}

/** An answer the dashboard shows as a page with this status. */
export class DashError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
    this.name = 'DashError';
  }
}

/**
 * Headers of every dashboard answer. The CSP allows nothing but this origin (no inline script
 * or style, no external font, script or CDN), no framing, forms posting only here.
 */
export const CONTENT_SECURITY_POLICY = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
  next();
};

const SIGNIN_NONCE = /^[A-Za-z0-9_-]{32,64}$/;
const TASK_ID = /^task_[A-Za-z0-9]{1,64}$/;
const KEY_ID = /^key_[A-Za-z0-9]{1,64}$/;
const EVENT_ID = /^evt_[A-Za-z0-9_.:-]{1,200}$/;

const DONE: Record<string, Flash> = {
  signed_out: { kind: 'info', title: 'You have signed out.' },
  key_revoked: { kind: 'ok', title: 'Key revoked', text: ' API requests with it are refused (401) from now on.' },
  endpoint_saved: { kind: 'ok', title: 'Endpoint saved', text: ' The next event is delivered to it.' },
  test_sent: {
    kind: 'ok',
    title: 'Test event sent',
    text: ' It appears in the delivery log below within a second or two; Refresh to see its attempt.',
  },
  redelivered: { kind: 'ok', title: 'Redelivery scheduled', text: ' The event gets a fresh series of attempts, starting now.' },
  connection_revoked: { kind: 'ok', title: 'Connection revoked', text: ' Its tokens were revoked at the provider and deleted.' },
};

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function bodyField(req: Request, name: string): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  return str(body[name]);
}

function queryField(req: Request, name: string): string {
  return str(req.query[name]);
}

function envOf(value: string): Environment {
  return (ENVIRONMENTS as readonly string[]).includes(value) ? (value as Environment) : 'test';
}

function doneFlash(req: Request): Flash | null {
  const code = queryField(req, 'done');
  return Object.hasOwn(DONE, code) ? (DONE[code] ?? null) : null;
}

function ctxOf(res: Response): DashCtx {
  return res.locals['dash'] as DashCtx;
}

function send(res: Response, page: string, status = 200): void {
  res.status(status).type('html').send(page);
}

function redirect(res: Response, to: string): void {
  res.redirect(303, to);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function dashboardRouter(deps: DashboardDeps): express.Router {
  const router = express.Router({ caseSensitive: true, strict: false });
  router.use(securityHeaders);

  // ---- static assets (no session) ----
  const asset =
    (type: string, body: string): RequestHandler =>
    (req, res) => {
      res.setHeader('Cache-Control', req.query['v'] === ASSET_VERSION ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
      res.type(type).send(body);
    };
  router.get('/assets/dashboard.css', asset('text/css', DASHBOARD_CSS));
  router.get('/assets/icon.svg', asset('image/svg+xml', ICON_SVG));

  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 50 }));

  // ---- request/reply to the back ends ----
  async function ask(type: RequestType, data: MessageDataMap[RequestType], what: string): Promise<Record<string, unknown>> {
    let reply: unknown;
    try {
      reply = await deps.broker.request(type, data, { timeoutMs: deps.requestTimeoutMs });
    } catch (err) {
      if (err instanceof RequestTimeoutError || err instanceof BrokerUnavailableError) {
        throw new DashError(503, `${what} is unavailable`, `The ${what.toLowerCase()} did not answer in time. Try again in a moment.`);
      }
      throw err;
    }
    const r = (reply ?? {}) as { ok?: boolean; error?: { code?: string; message?: string } };
    if (r.ok === true) return r;
    const code = r.error?.code ?? 'internal_error';
    const message = r.error?.message ?? 'The request failed.';
    if (code === 'invalid_request') throw new DashError(400, 'Not accepted', message);
    if (code === 'not_found' || code === 'connection_not_found') throw new DashError(404, 'Not found', message);
    throw new DashError(503, `${what} is unavailable`, `The ${what.toLowerCase()} could not answer. Try again in a moment.`);
  }

  // ---- sign-in ----
  function signInNonce(req: Request, res: Response): string {
    const existing = parseCookies(req.get('cookie'))[PRESESSION_COOKIE];
    if (existing && SIGNIN_NONCE.test(existing)) return existing;
    const nonce = randomBytes(32).toString('base64url');
    res.append('Set-Cookie', hostCookie(PRESESSION_COOKIE, nonce, { maxAgeS: 12 * 3600 }));
    return nonce;
  }

  async function currentSession(req: Request): Promise<{ ctx: Omit<DashCtx, 'env'>; sid: string } | { disabled: true } | null> {
    const claims = deps.keys.verify(parseCookies(req.get('cookie'))[SESSION_COOKIE]);
    if (!claims) return null;
    const owner = await deps.owners.byId(claims.sub);
    if (!owner || owner.account_id !== claims.acct || passwordFingerprint(owner.password_hash) !== claims.pwd) return null;
    // Signed out (or expired) server-side: a copy of the cookie is refused too.
    if (!(await deps.sessions.isActive(claims.sid, owner._id))) return null;
    const account = await deps.accounts.account(owner.account_id);
    if (!account) return null;
    if (account.status !== 'active') return { disabled: true };
    return { ctx: { owner, account, csrf: deps.keys.csrfFor(sessionBinding(claims.sid)) }, sid: claims.sid };
  }

  router.get('/', async (req, res) => {
    const s = await currentSession(req);
    redirect(res, s && 'ctx' in s ? href('/keys') : href('/sign-in'));
  });

  router.get('/sign-in', async (req, res) => {
    const s = await currentSession(req);
    if (s && 'ctx' in s) return redirect(res, href('/keys'));
    const nonce = signInNonce(req, res);
    send(res, signInPage({ csrf: deps.keys.csrfFor(presessionBinding(nonce)), flash: doneFlash(req) }));
  });

  router.post('/sign-in', async (req, res) => {
    const nonce = parseCookies(req.get('cookie'))[PRESESSION_COOKIE] ?? '';
    const fresh = signInNonce(req, res);
    const csrf = deps.keys.csrfFor(presessionBinding(fresh));
    const email = bodyField(req, 'email').trim();
    const password = bodyField(req, 'password');
    const again = (status: number, f: Flash) => send(res, signInPage({ csrf, email, flash: f }), status);
    if (!SIGNIN_NONCE.test(nonce) || !deps.keys.checkCsrf(presessionBinding(nonce), bodyField(req, '_csrf'))) {
      return again(403, { kind: 'err', title: 'This sign-in form has expired.', text: ' Please try again (cookies must be enabled).' });
    }
    if (!email || !password) return again(400, { kind: 'err', title: 'Enter your email and password.' });
    if (!EMAIL_PATTERN.test(email) || password.length > 4096) {
      return again(401, { kind: 'err', title: 'Email or password is incorrect.' });
    }
    const now = new Date();
    const address = addressKey(deps.clientAddress(req));
    const recent = await deps.owners.recentFailures(email, address, now);
    const gate = signInGate(recent, now);
    if (gate.lock) {
      const { retryAt, scope } = gate.lock;
      res.setHeader('Retry-After', String(Math.max(1, Math.ceil((retryAt.getTime() - now.getTime()) / 1000))));
      return again(429, {
        kind: 'err',
        title: scope === 'email' ? 'Too many failed sign-ins for this email.' : 'Too many failed sign-ins from your network.',
        text: ` Sign-in is locked for ${waitText(retryAt, now)}.`,
      });
    }
    // The back-off waits before the password is checked, whatever its outcome: the delay says nothing.
    await sleep(gate.delayMs);
    const owner = await deps.owners.byEmail(email);
    const ok = (await verifyPassword(password, owner?.password_hash ?? (await decoyHash()))) && owner !== null;
    if (!ok || !owner) {
      await deps.owners.recordFailure(email, address, now);
      const failures = [now, ...recent.pair];
      const after = lockState(failures, now, MAX_FAILURES);
      deps.logger.info('dashboard sign-in refused', { failures_in_window: failures.length, locked: after.locked });
      return again(401, {
        kind: 'err',
        title: 'Email or password is incorrect.',
        text:
          after.locked && after.retryAt
            ? ` Too many failures: sign-in for this email from your address is locked for ${waitText(after.retryAt, now)}.`
            : '',
      });
    }
    const account = await deps.accounts.account(owner.account_id);
    if (!account || account.status !== 'active') {
      return again(403, { kind: 'err', title: 'This account is disabled.', text: ' Contact your operator.' });
    }
    await deps.owners.clearFailures(email, address);
    const { token, sid } = deps.keys.issue({ sub: owner._id, acct: owner.account_id, pwd: passwordFingerprint(owner.password_hash) });
    await deps.sessions.create(sid, owner._id, owner.account_id, SESSION_TTL_S);
    res.append('Set-Cookie', hostCookie(SESSION_COOKIE, token, { maxAgeS: SESSION_TTL_S }));
    deps.logger.info('dashboard sign-in', { owner_id: owner._id, account_id: owner.account_id });
    redirect(res, href('/keys'));
  });

  // ---- everything below needs a session; every POST needs its CSRF token ----
  router.use(async (req, res, next) => {
    const s = await currentSession(req);
    if (s && 'disabled' in s) {
      res.append('Set-Cookie', clearCookie(SESSION_COOKIE));
      throw new DashError(403, 'This account is disabled', 'Your operator has disabled this account. Contact them to enable it again.');
    }
    if (!s) {
      if (req.method === 'GET' || req.method === 'HEAD') return redirect(res, href('/sign-in'));
      throw new DashError(401, 'Your session has ended', 'Sign in again, then repeat what you were doing.');
    }
    const env = envOf(req.method === 'POST' ? bodyField(req, 'env') || queryField(req, 'env') : queryField(req, 'env'));
    res.locals['dash'] = { ...s.ctx, env } satisfies DashCtx;
    res.locals['sid'] = s.sid;
    if (req.method === 'POST' && !deps.keys.checkCsrf(sessionBinding(s.sid), bodyField(req, '_csrf'))) {
      deps.logger.warn('dashboard form refused: bad or missing CSRF token', { path: req.path, owner_id: s.ctx.owner._id });
      throw new DashError(
        403,
        'This form could not be verified',
        'The form was not sent from this dashboard page, or it is too old. Reload the page and try again.',
      );
    }
    next();
  });

  router.post('/sign-out', async (_req, res) => {
    await deps.sessions.revoke(res.locals['sid'] as string);
    res.append('Set-Cookie', clearCookie(SESSION_COOKIE));
    redirect(res, href('/sign-in', { done: 'signed_out' }));
  });

  // ---- API keys ----
  router.get('/keys', async (req, res) => {
    const ctx = ctxOf(res);
    send(res, keysPage(ctx, { keys: await listKeys(deps.accounts, ctx.account._id), flash: doneFlash(req) }));
  });

  router.post('/keys', async (req, res) => {
    const ctx = ctxOf(res);
    const env = bodyField(req, 'environment');
    if (!(ENVIRONMENTS as readonly string[]).includes(env))
      throw new DashError(400, 'Not accepted', 'Choose the test or live environment.');
    const created = await createKey(deps.accounts, ctx.account._id, env as Environment);
    deps.logger.info('dashboard: API key created', { account_id: ctx.account._id, key_id: created.key.id });
    const shown: NewKey = { secret: created.secret, key: created.key };
    send(res, keysPage({ ...ctx, env: env as Environment }, { keys: await listKeys(deps.accounts, ctx.account._id), created: shown }), 201);
  });

  router.post('/keys/:key_id/rotate', async (req, res) => {
    const ctx = ctxOf(res);
    const id = str(req.params['key_id']);
    const r = KEY_ID.test(id) ? await rotateKey(deps.accounts, ctx.account._id, id) : null;
    if (!r) throw new DashError(404, 'No such key', 'This key does not exist or is already revoked.');
    deps.logger.info('dashboard: API key rotated', { account_id: ctx.account._id, old_key_id: id, key_id: r.key.id });
    const shown: NewKey = { secret: r.secret, key: r.key, replaced: r.revoked };
    send(res, keysPage(ctx, { keys: await listKeys(deps.accounts, ctx.account._id), created: shown }), 201);
  });

  router.post('/keys/:key_id/revoke', async (req, res) => {
    const ctx = ctxOf(res);
    const id = str(req.params['key_id']);
    const r = KEY_ID.test(id) ? await revokeKey(deps.accounts, ctx.account._id, id) : null;
    if (!r) throw new DashError(404, 'No such key', 'This key does not exist or is already revoked.');
    deps.logger.info('dashboard: API key revoked', { account_id: ctx.account._id, key_id: id });
    redirect(res, href('/keys', { env: ctx.env, done: 'key_revoked' }));
  });

  // ---- webhooks ----
  async function webhooksView(ctx: DashCtx, extra: Partial<WebhooksView> = {}): Promise<WebhooksView> {
    const scope = { account_id: ctx.account._id, environment: ctx.env };
    const [got, log] = await Promise.allSettled([
      ask('webhook.get', scope, 'Webhook service') as Promise<unknown> as Promise<WebhookGetReply>,
      ask('webhook.deliveries', { ...scope, limit: 25 }, 'Webhook service') as Promise<unknown> as Promise<WebhookDeliveriesReply>,
    ]);
    if (got.status === 'rejected') {
      const err = got.reason as unknown;
      if (!(err instanceof DashError)) throw err;
      return { endpoint: null, secret: null, deliveries: null, unavailable: err.message, ...extra };
    }
    return {
      endpoint: got.value.endpoint,
      secret: got.value.secret,
      deliveries: log.status === 'fulfilled' ? log.value.data : null,
      ...extra,
    };
  }

  /** Runs a webhook action; a refusal re-renders the page with the reason next to the form. */
  async function webhookAction(res: Response, action: () => Promise<void>, keep: Partial<WebhooksView> = {}): Promise<void> {
    const ctx = ctxOf(res);
    try {
      await action();
    } catch (err) {
      if (!(err instanceof DashError) || err.status >= 500) throw err;
      const view = await webhooksView(ctx, {
        ...keep,
        flash: { kind: 'err', title: err.status === 404 ? 'Not found' : 'Not saved', text: ` ${err.message}` },
      });
      send(res, webhooksPage(ctx, view), err.status);
    }
  }

  router.get('/webhooks', async (req, res) => {
    const ctx = ctxOf(res);
    send(res, webhooksPage(ctx, await webhooksView(ctx, { flash: doneFlash(req) })));
  });

  router.post('/webhooks/endpoint', async (req, res) => {
    const ctx = ctxOf(res);
    const url = bodyField(req, 'url').trim();
    await webhookAction(
      res,
      async () => {
        if (!url) throw new DashError(400, 'Not accepted', 'Enter the URL of your webhook endpoint.');
        if (url.length > 2048) throw new DashError(400, 'Not accepted', 'The URL is too long (2048 characters at most).');
        // The database cannot store a NUL: refused here rather than waiting for the dispatcher's answer to time out.
        if (url.includes('\u0000')) throw new DashError(400, 'Not accepted', 'The URL holds a NUL character.');
        await ask('webhook.set', { account_id: ctx.account._id, environment: ctx.env, url }, 'Webhook service');
        deps.logger.info('dashboard: webhook endpoint set', { account_id: ctx.account._id, environment: ctx.env });
        redirect(res, href('/webhooks', { env: ctx.env, done: 'endpoint_saved' }));
      },
      { urlInput: url },
    );
  });

  router.post('/webhooks/secret/reveal', async (_req, res) => {
    const ctx = ctxOf(res);
    const r = (await ask(
      'webhook.get',
      { account_id: ctx.account._id, environment: ctx.env, reveal_secret: true },
      'Webhook service',
    )) as unknown as WebhookGetReply;
    deps.logger.info('dashboard: webhook secret revealed', { account_id: ctx.account._id, environment: ctx.env });
    const view = await webhooksView(ctx);
    send(res, webhooksPage(ctx, { ...view, ...(r.secret?.value ? { revealed: r.secret.value } : {}) }));
  });

  router.post('/webhooks/secret/rotate', async (_req, res) => {
    const ctx = ctxOf(res);
    const r = (await ask(
      'webhook.rotate_secret',
      { account_id: ctx.account._id, environment: ctx.env },
      'Webhook service',
    )) as unknown as WebhookRotateReply;
    deps.logger.info('dashboard: webhook secret rotated', { account_id: ctx.account._id, environment: ctx.env, version: r.secret.version });
    const view = await webhooksView(ctx);
    const text = r.secret.previous_valid_until
      ? html` Deliveries are signed with both secrets until ${r.secret.previous_valid_until.slice(0, 16).replace('T', ' ')} UTC; update your
        receiver before then.`
      : html` Update your receiver.`;
    send(
      res,
      webhooksPage(ctx, {
        ...view,
        revealed: r.secret.value,
        flash: { kind: 'ok', title: `Secret rotated (version ${r.secret.version})`, text },
      }),
    );
  });

  router.post('/webhooks/test', async (_req, res) => {
    const ctx = ctxOf(res);
    await webhookAction(res, async () => {
      await ask('webhook.send_test', { account_id: ctx.account._id, environment: ctx.env }, 'Webhook service');
      redirect(res, href('/webhooks', { env: ctx.env, done: 'test_sent' }));
    });
  });

  router.post('/webhooks/redeliver', async (req, res) => {
    const ctx = ctxOf(res);
    const eventId = bodyField(req, 'event_id');
    await webhookAction(res, async () => {
      if (!EVENT_ID.test(eventId)) throw new DashError(404, 'Not found', 'No such event.');
      await ask('webhook.redeliver', { account_id: ctx.account._id, environment: ctx.env, event_id: eventId }, 'Webhook service');
      redirect(res, href('/webhooks', { env: ctx.env, done: 'redelivered' }));
    });
  });

  // ---- tasks ----
  router.get('/tasks', async (req, res) => {
    const ctx = ctxOf(res);
    const problems: string[] = [];
    const status = queryField(req, 'status');
    const userId = queryField(req, 'user_id').trim();
    const limitText = queryField(req, 'limit');
    const offsetText = queryField(req, 'offset');
    const limit = limitText === '' ? 20 : Number(limitText);
    const offset = offsetText === '' ? 0 : Number(offsetText);
    if (status !== '' && !(TASK_STATUSES as readonly string[]).includes(status))
      problems.push(`status must be one of: ${TASK_STATUSES.join(', ')}`);
    if (userId.length > 256) problems.push('user_id must have at most 256 characters');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) problems.push('the page size must be from 1 to 100');
    if (!Number.isInteger(offset) || offset < 0 || offset > 1_000_000) problems.push('offset must be 0 or more');
    const filters: TaskFilters = {
      status: problems.length ? '' : status,
      user_id: problems.length ? '' : userId,
      limit: Number.isInteger(limit) && limit >= 1 && limit <= 100 ? limit : 20,
      offset: problems.length ? 0 : offset,
    };
    if (problems.length) {
      return send(
        res,
        tasksPage(ctx, {
          filters,
          rows: [],
          hasMore: false,
          flash: { kind: 'err', title: 'These filters are not valid:', text: ` ${problems.join('; ')}.` },
        }),
        400,
      );
    }
    const rows = await deps.views.list(
      {
        account_id: ctx.account._id,
        environment: ctx.env,
        ...(filters.status ? { status: filters.status as TaskStatus } : {}),
        ...(filters.user_id ? { user_id: filters.user_id } : {}),
      },
      filters.limit + 1,
      filters.offset,
    );
    send(res, tasksPage(ctx, { filters, rows: rows.slice(0, filters.limit), hasMore: rows.length > filters.limit }));
  });

  router.get('/tasks/:task_id', async (req, res) => {
    const ctx = ctxOf(res);
    const id = str(req.params['task_id']);
    const notFound = new DashError(404, 'Task not found', `There is no ${ctx.env} task ${id.slice(0, 80)} in this account.`);
    if (!TASK_ID.test(id)) throw notFound;
    const task = await deps.views.get(id, ctx.account._id, ctx.env);
    if (!task) {
      const other: Environment = ctx.env === 'test' ? 'live' : 'test';
      if (await deps.views.get(id, ctx.account._id, other)) return redirect(res, href(`/tasks/${id}`, { env: other }));
      throw notFound;
    }
    const scope = { task_id: id, account_id: ctx.account._id, environment: ctx.env };
    const [trace, deliveries, waiting] = await Promise.allSettled([
      deps.broker.request('trace.get', scope, { timeoutMs: deps.requestTimeoutMs }),
      ask('webhook.deliveries', { account_id: ctx.account._id, environment: ctx.env, task_id: id, limit: 50 }, 'Webhook service'),
      currentWaiting(task, { broker: deps.broker, timeoutMs: deps.requestTimeoutMs }),
    ]);
    let traceValue: TaskTrace | null = null;
    let traceError: string | undefined;
    if (trace.status === 'fulfilled' && (trace.value as { ok?: boolean }).ok === true) {
      traceValue = (trace.value as { trace: TaskTrace }).trace;
    } else {
      traceError = 'The trace could not be read right now (the executor did not answer). Refresh to try again.';
    }
    const log: WebhookDeliveryInfo[] | null =
      deliveries.status === 'fulfilled' ? (deliveries.value as unknown as WebhookDeliveriesReply).data : null;
    const w = waiting.status === 'fulfilled' ? waiting.value : undefined;
    send(
      res,
      taskPage(ctx, { task, trace: traceValue, ...(traceError ? { traceError } : {}), deliveries: log, ...(w ? { waiting: w } : {}) }),
    );
  });

  // ---- connections ----
  async function renderConnections(res: Response, userId: string, f: Flash | null, status = 200): Promise<void> {
    const ctx = ctxOf(res);
    const users = await deps.usage.recentUserIds(ctx.account._id, ctx.env).catch(() => []);
    let connections: ConnectionView[] | null = null;
    let error: string | undefined;
    if (userId) {
      try {
        const r = await ask('connections.list', { account_id: ctx.account._id, environment: ctx.env, user_id: userId }, 'OAuth vault');
        connections = ((r['connections'] ?? []) as ConnectionView[]).map((c) => ({
          service: c.service,
          scopes: c.scopes,
          status: c.status,
          connected_at: c.connected_at,
        }));
      } catch (err) {
        if (!(err instanceof DashError)) throw err;
        error = err.message;
      }
    }
    send(res, connectionsPage(ctx, { userId, users, connections, ...(error ? { error } : {}), flash: f }), status);
  }

  router.get('/connections', async (req, res) => {
    const userId = queryField(req, 'user_id').trim();
    if (userId.length > 256) throw new DashError(400, 'Not accepted', 'A user_id has at most 256 characters.');
    await renderConnections(res, userId, doneFlash(req));
  });

  router.post('/connections/revoke', async (req, res) => {
    const ctx = ctxOf(res);
    const userId = bodyField(req, 'user_id');
    const service = bodyField(req, 'service');
    if (!userId || userId.length > 256 || !service || service.length > 256)
      throw new DashError(400, 'Not accepted', 'Choose a user and a service.');
    try {
      await ask('connection.revoke', { account_id: ctx.account._id, environment: ctx.env, user_id: userId, service }, 'OAuth vault');
    } catch (err) {
      if (!(err instanceof DashError) || err.status >= 500) throw err;
      return renderConnections(
        res,
        userId,
        { kind: 'err', title: 'Not revoked', text: ` ${userId} has no ${service} connection.` },
        err.status,
      );
    }
    deps.logger.info('dashboard: connection revoked', { account_id: ctx.account._id, environment: ctx.env, service });
    redirect(res, href('/connections', { env: ctx.env, user_id: userId, done: 'connection_revoked' }));
  });

  // ---- usage ----
  router.get('/usage', async (_req, res) => {
    const ctx = ctxOf(res);
    const now = Date.now();
    const [requests, counts] = await Promise.all([
      deps.usage.requestsThisMinute(ctx.account._id, now),
      deps.usage.taskCounts(ctx.account._id, ['running', 'pending', 'waiting']),
    ]);
    send(
      res,
      usagePage(ctx, {
        plan: ctx.account.plan,
        requestsPerMinute: requestsPerMinute(ctx.account),
        requestsThisMinute: requests,
        resetsInS: retryAfterSeconds(now),
        concurrentLimit: concurrentTasks(ctx.account),
        running: counts['running'] ?? 0,
        pending: counts['pending'] ?? 0,
        waiting: counts['waiting'] ?? 0,
      }),
    );
  });

  // ---- not found, errors: HTML pages, never the API's JSON ----
  router.use((req, _res, next) => next(new DashError(404, 'Page not found', `There is no dashboard page ${req.path.slice(0, 100)}.`)));
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const ctx = (res.locals['dash'] as DashCtx | undefined) ?? null;
    const tab = (['keys', 'webhooks', 'tasks', 'connections', 'usage'] as Tab[]).find((t) => req.path.startsWith(`/${t}`));
    let e: DashError;
    if (err instanceof DashError) e = err;
    else if ((err as { type?: string }).type === 'entity.too.large')
      e = new DashError(413, 'Form too large', 'The form sent too much data.');
    else if ((err as { type?: string }).type === 'entity.parse.failed')
      e = new DashError(400, 'Form not readable', 'The form could not be read.');
    else {
      deps.logger.error('dashboard error', { path: req.path, error: err instanceof Error ? err : String(err) });
      e = new DashError(
        500,
        'Something went wrong',
        'An internal error occurred. Try again; if it keeps happening, contact your operator.',
      );
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    send(res, errorPage(ctx, { title: e.title, message: e.message, ...(tab ? { tab } : {}) }), e.status);
  });
  return router;
}
