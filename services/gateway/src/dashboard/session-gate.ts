import type { Request, RequestHandler } from 'express';
import { cookiesOf } from '@tes/http';
import type { DashboardDeps } from './deps.js';
import { DashError } from './errors.js';
import { href, type DashCtx } from './layout.js';
import { bodyField, envOf, queryField, redirect, setSignedIn } from './request.js';
import { SESSION_COOKIE, clearCookie, passwordFingerprint, sessionBinding } from './session.js';

type CurrentSession = { ctx: Omit<DashCtx, 'env'>; sid: string } | { disabled: true } | null;

/**
 * The request's session: its cookie verified, its owner's password unchanged, the session still
 * stored (signed out or expired server-side: a copy of the cookie is refused too), its account
 * active (`disabled` otherwise). Null when there is none.
 */
export async function currentSession(
  deps: Pick<DashboardDeps, 'keys' | 'owners' | 'sessions' | 'accounts'>,
  req: Request,
): Promise<CurrentSession> {
  const claims = deps.keys.verify(cookiesOf(req)[SESSION_COOKIE]);
  if (!claims) return null;
  const owner = await deps.owners.byId(claims.sub);
  if (!owner || owner.account_id !== claims.acct || passwordFingerprint(owner.password_hash) !== claims.pwd) return null;
  if (!(await deps.sessions.isActive(claims.sid, owner._id))) return null;
  const account = await deps.accounts.account(owner.account_id);
  if (!account) return null;
  if (account.status !== 'active') return { disabled: true };
  return { ctx: { owner, account, csrf: deps.keys.csrfFor(sessionBinding(claims.sid)) }, sid: claims.sid };
}

/**
 * The gate in front of every signed-in page: a GET without a session goes to sign-in, anything
 * else is refused; every POST must carry its session's CSRF token.
 */
export function requireSession(deps: Pick<DashboardDeps, 'keys' | 'owners' | 'sessions' | 'accounts' | 'logger'>): RequestHandler {
  return async (req, res, next) => {
    const s = await currentSession(deps, req);
    if (s && 'disabled' in s) {
      res.append('Set-Cookie', clearCookie(SESSION_COOKIE));
      throw new DashError(403, 'This account is disabled', 'Your operator has disabled this account. Contact them to enable it again.');
    }
    if (!s) {
      if (req.method === 'GET' || req.method === 'HEAD') return redirect(res, href('/sign-in'));
      throw new DashError(401, 'Your session has ended', 'Sign in again, then repeat what you were doing.');
    }
    const env = envOf(req.method === 'POST' ? bodyField(req, 'env') || queryField(req, 'env') : queryField(req, 'env'));
    setSignedIn(res, { ...s.ctx, env }, s.sid);
    if (req.method === 'POST' && !deps.keys.checkCsrf(sessionBinding(s.sid), bodyField(req, '_csrf'))) {
      deps.logger.warn('dashboard form refused: bad or missing CSRF token', { path: req.path, owner_id: s.ctx.owner._id });
      throw new DashError(
        403,
        'This form could not be verified',
        'The form was not sent from this dashboard page, or it is too old. Reload the page and try again.',
      );
    }
    next();
  };
}
