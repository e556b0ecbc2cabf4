import type { RequestHandler, Response } from 'express';
import type { Environment } from '@tes/contracts';
import { AppError } from '@tes/errors';
import type { AccountDoc } from '../store/account.repository.js';
import type { CredentialsSource } from '../domain/credentials-cache.js';
import { API_KEY_PATTERN, environmentOf, hashApiKey, sameHash } from '../domain/api-key.js';

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
 * replica, so a revoked key or a disabled account is refused on the next request.
 */
export function authenticate(credentials: CredentialsSource): RequestHandler {
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
    if (!stored || !sameHash(stored.hash, hash) || stored.status !== 'active') {
      throw new AppError('invalid_api_key', 'The API key is unknown or revoked');
    }
    if (!account) throw new AppError('invalid_api_key', 'The API key is unknown or revoked');
    if (account.status !== 'active') throw new AppError('account_disabled', 'This account has been disabled; contact support');
    const auth: AuthContext = { account, environment: environmentOf(key), keyId: stored._id };
    res.locals['auth'] = auth;
    next();
  };
}
