import type { RequestHandler, Response } from 'express';
import type { Environment } from '@tes/contracts';
import { AppError } from '@tes/errors';
import type { AccountDoc } from '../store/account.repository.js';
import type { CredentialsSource } from '../domain/credentials-cache.js';
import { API_KEY_PATTERN, environmentOf, hashApiKey, keyUsable, sameHash } from '../domain/api-key.js';
import type { LastUsedThrottle } from '../domain/last-used.js';

export interface AuthContext {
  account: AccountDoc;
  environment: Environment;
  keyId: string;
}

export function authOf(res: Response): AuthContext {
  return res.locals['auth'] as AuthContext;
}

/**
 * Spec 5: Bearer key. The key and its account come from `credentials`: the database, or the
 * replica's CredentialsCache, which every revocation or account change clears at once on every
 * replica, so a revoked key or a disabled account is refused on the next request. A key rolled with
 * a delay is checked against its expiry at each request (a cached copy too), so it is refused from
 * the first request after it. `lastUsed` records the key's use (throttled, never awaited).
 */
export function authenticate(credentials: CredentialsSource, lastUsed?: Pick<LastUsedThrottle, 'touch'>): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    if (header === undefined || header.trim() === '') {
      throw new AppError('missing_api_key', 'No API key: send Authorization: Bearer <API_KEY>');
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const key = match?.[1];
    if (!key || !API_KEY_PATTERN.test(key)) throw new AppError('invalid_api_key', 'The API key is malformed');
    const hash = hashApiKey(key);
    const { key: stored, account } = await credentials.keyAndAccount(hash);
    if (!stored || !sameHash(stored.hash, hash) || !keyUsable(stored, Date.now())) {
      throw new AppError('invalid_api_key', 'The API key is unknown, revoked or expired');
    }
    if (!account) throw new AppError('invalid_api_key', 'The API key is unknown, revoked or expired');
    if (account.status !== 'active') throw new AppError('account_disabled', 'This account has been disabled; contact support');
    const auth: AuthContext = { account, environment: environmentOf(key), keyId: stored._id };
    res.locals['auth'] = auth;
    lastUsed?.touch(stored._id);
    next();
  };
}
