import type { RequestHandler } from 'express';
import { isRollExpiry, keyNameProblem } from '../../domain/api-key.js';
import type { DashboardDeps } from '../deps.js';
import { DashError } from '../errors.js';
import { createKey, listKeys, revokeKey, rollKey } from '../keys.js';
import { href } from '../layout.js';
import { keysPage, type NewKey } from '../pages/keys.page.js';
import { bodyField, ctxOf, doneFlash, isEnvironment, paramField, redirect, send } from '../request.js';

type KeysDeps = Pick<DashboardDeps, 'accounts' | 'logger'>;

const KEY_ID = /^key_[A-Za-z0-9]{1,64}$/;

const noSuchKey = () => new DashError(404, 'No such key', 'This key does not exist, or is already revoked or expired.');

/** GET /dashboard/keys */
export function keysRoute(deps: KeysDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    send(res, keysPage(ctx, { keys: await listKeys(deps.accounts, ctx.account._id), flash: doneFlash(req) }));
  };
}

/** POST /dashboard/keys: a new key of the chosen environment, with an optional name, shown once. */
export function createKeyRoute(deps: KeysDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const env = bodyField(req, 'environment');
    if (!isEnvironment(env)) throw new DashError(400, 'Not accepted', 'Choose the test or live environment.');
    const name = bodyField(req, 'name').trim();
    const problem = name ? keyNameProblem(name) : null;
    if (problem) throw new DashError(400, 'Not accepted', `Key name: ${problem}.`);
    const created = await createKey(deps.accounts, ctx.account._id, env, name);
    deps.logger.info('dashboard: API key created', { account_id: ctx.account._id, key_id: created.key.id });
    const shown: NewKey = { secret: created.secret, key: created.key };
    send(res, keysPage({ ...ctx, env }, { keys: await listKeys(deps.accounts, ctx.account._id), created: shown }), 201);
  };
}

/** POST /dashboard/keys/:key_id/roll: a new key shown once; the old one revoked now or after the chosen delay. */
export function rollKeyRoute(deps: KeysDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const id = paramField(req, 'key_id');
    const expiresIn = bodyField(req, 'expires_in') || 'now';
    if (!isRollExpiry(expiresIn))
      throw new DashError(400, 'Not accepted', 'Choose when the old key stops working: now, 1 hour, 24 hours or 7 days.');
    const r = KEY_ID.test(id) ? await rollKey(deps.accounts, ctx.account._id, id, expiresIn) : null;
    if (!r) throw noSuchKey();
    deps.logger.info('dashboard: API key rolled', { account_id: ctx.account._id, old_key_id: id, key_id: r.key.id, expires_in: expiresIn });
    const shown: NewKey = { secret: r.secret, key: r.key, replaced: r.old };
    send(res, keysPage(ctx, { keys: await listKeys(deps.accounts, ctx.account._id), created: shown }), 201);
  };
}

/** POST /dashboard/keys/:key_id/revoke: at once, an expiring key too. */
export function revokeKeyRoute(deps: KeysDeps): RequestHandler {
  return async (req, res) => {
    const ctx = ctxOf(res);
    const id = paramField(req, 'key_id');
    const r = KEY_ID.test(id) ? await revokeKey(deps.accounts, ctx.account._id, id) : null;
    if (!r) throw noSuchKey();
    deps.logger.info('dashboard: API key revoked', { account_id: ctx.account._id, key_id: id });
    redirect(res, href('/keys', { env: ctx.env, done: 'key_revoked' }));
  };
}
