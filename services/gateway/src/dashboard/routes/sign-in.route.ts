import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { addressKey, cookiesOf } from '@tes/http';
import type { DashboardDeps } from '../deps.js';
import { href, type Flash } from '../layout.js';
import { MAX_FAILURES, lockState, signInGate, waitText } from '../lockout.js';
import { EMAIL_PATTERN } from '../owner.js';
import { signInPage } from '../pages/sign-in.page.js';
import { decoyHash, verifyPassword } from '../password.js';
import { bodyField, doneFlash, redirect, send, sessionIdOf } from '../request.js';
import { currentSession } from '../session-gate.js';
import {
  PRESESSION_COOKIE,
  SESSION_COOKIE,
  SESSION_TTL_S,
  clearCookie,
  hostCookie,
  passwordFingerprint,
  presessionBinding,
} from '../session.js';

type SessionDeps = Pick<DashboardDeps, 'keys' | 'owners' | 'sessions' | 'accounts'>;

const SIGNIN_NONCE = /^[A-Za-z0-9_-]{32,64}$/;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The sign-in form's nonce (its CSRF token is bound to it): the cookie's, or a new one set now. */
function signInNonce(req: Request, res: Response): string {
  const existing = cookiesOf(req)[PRESESSION_COOKIE];
  if (existing && SIGNIN_NONCE.test(existing)) return existing;
  const nonce = randomBytes(32).toString('base64url');
  res.append('Set-Cookie', hostCookie(PRESESSION_COOKIE, nonce, { maxAgeS: 12 * 3600 }));
  return nonce;
}

/** GET /dashboard: the keys when signed in, sign-in otherwise. */
export function homeRoute(deps: SessionDeps): RequestHandler {
  return async (req, res) => {
    const s = await currentSession(deps, req);
    redirect(res, s && 'ctx' in s ? href('/keys') : href('/sign-in'));
  };
}

/** GET /dashboard/sign-in */
export function signInFormRoute(deps: SessionDeps): RequestHandler {
  return async (req, res) => {
    const s = await currentSession(deps, req);
    if (s && 'ctx' in s) return redirect(res, href('/keys'));
    const nonce = signInNonce(req, res);
    send(res, signInPage({ csrf: deps.keys.csrfFor(presessionBinding(nonce)), flash: doneFlash(req) }));
  };
}

/**
 * POST /dashboard/sign-in: the form's token, the lock-out (see lockout.ts), the password, the
 * account's status; then a session stored server-side and its cookie.
 */
export function signInRoute(deps: SessionDeps & Pick<DashboardDeps, 'clientAddress' | 'logger'>): RequestHandler {
  return async (req, res) => {
    const nonce = cookiesOf(req)[PRESESSION_COOKIE] ?? '';
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
  };
}

/** POST /dashboard/sign-out (signed in): the session is deleted, its cookie refused from now on. */
export function signOutRoute(deps: Pick<DashboardDeps, 'sessions'>): RequestHandler {
  return async (_req, res) => {
    await deps.sessions.revoke(sessionIdOf(res));
    res.append('Set-Cookie', clearCookie(SESSION_COOKIE));
    redirect(res, href('/sign-in', { done: 'signed_out' }));
  };
}
