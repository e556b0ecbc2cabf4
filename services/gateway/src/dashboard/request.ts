import type { Request, Response } from 'express';
import { ENVIRONMENTS, type Environment } from '@tes/contracts';
import type { DashCtx, Flash } from './layout.js';
import type { Scope } from './upstream.js';

// The request helpers every dashboard route uses: form and query fields, the signed-in context, answers.

/** Messages shown after a redirect (`?done=`). */
const DONE: Record<string, Flash> = {
  signed_out: { kind: 'info', title: 'You have signed out.' },
  key_revoked: { kind: 'ok', title: 'Key revoked', text: ' API requests with it are refused (401) from now on.' },
  endpoint_saved: { kind: 'ok', title: 'Endpoint saved', text: ' The next event is delivered to it.' },
  test_sent: {
    kind: 'ok',
    title: 'Test event sent',
    text: ' It appears in the delivery log below within a second or two; Refresh to see its attempt.',
  },
  resent_scheduled: {
    kind: 'ok',
    title: 'Resend scheduled',
    text: ' The event gets a fresh series of attempts, starting now. Refresh to see it.',
  },
  resent_due_now: {
    kind: 'ok',
    title: 'Resend scheduled',
    text: ' Its next attempt is made now instead of at its scheduled time (it does not use up a retry). Refresh to see it.',
  },
  resent_already_due: {
    kind: 'info',
    title: 'Already due',
    text: ' Its next attempt is under way, or waits for an earlier event of the same task to be delivered first.',
  },
  connection_revoked: { kind: 'ok', title: 'Connection revoked', text: ' Its tokens were revoked at the provider and deleted.' },
};

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function bodyField(req: Request, name: string): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  return str(body[name]);
}

export function queryField(req: Request, name: string): string {
  return str(req.query[name]);
}

export function paramField(req: Request, name: string): string {
  return str(req.params[name]);
}

export function isEnvironment(value: string): value is Environment {
  return (ENVIRONMENTS as readonly string[]).includes(value);
}

/** The environment a per-environment page shows: test unless live is asked for. */
export function envOf(value: string): Environment {
  return isEnvironment(value) ? value : 'test';
}

export function doneFlash(req: Request): Flash | null {
  const code = queryField(req, 'done');
  return Object.hasOwn(DONE, code) ? (DONE[code] ?? null) : null;
}

/** Set by the session gate for every signed-in request. */
export function setSignedIn(res: Response, ctx: DashCtx, sid: string): void {
  res.locals['dash'] = ctx;
  res.locals['sid'] = sid;
}

export function ctxOf(res: Response): DashCtx {
  return res.locals['dash'] as DashCtx;
}

/** The context of a signed-in request, null before the session gate (the error pages). */
export function signedInCtx(res: Response): DashCtx | null {
  return (res.locals['dash'] as DashCtx | undefined) ?? null;
}

/** The account and environment the page shows: what its back-end requests are about. */
export function scopeOf(ctx: DashCtx): Scope {
  return { account_id: ctx.account._id, environment: ctx.env };
}

export function sessionIdOf(res: Response): string {
  return res.locals['sid'] as string;
}

export function send(res: Response, page: string, status = 200): void {
  res.status(status).type('html').send(page);
}

export function redirect(res: Response, to: string): void {
  res.redirect(303, to);
}
