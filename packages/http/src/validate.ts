import type { Request } from 'express';
import { AppError } from '@tes/errors';
import { compile, compileQuery, describeErrors } from '@tes/contracts';

/** Validates the JSON body against a schema; a mismatch is 400 invalid_request naming the field. */
export function validBody<T>(req: Request, schema: object): T {
  if (!req.is('application/json')) {
    throw new AppError('invalid_request', 'Content-Type must be application/json');
  }
  const body: unknown = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('invalid_request', 'Request body must be a JSON object');
  }
  const check = compile<T>(schema);
  if (!check(body)) throw new AppError('invalid_request', describeErrors(check.errors));
  return body;
}

/** Validates (and coerces) query parameters; repeated parameters are rejected. */
export function validQuery<T>(req: Request, schema: object): T {
  const query: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.query)) {
    if (typeof v !== 'string') throw new AppError('invalid_request', `query parameter ${k} must be given once as a plain value`);
    query[k] = v;
  }
  const check = compileQuery<T>(schema);
  if (!check(query)) throw new AppError('invalid_request', `query parameter ${describeErrors(check.errors, 'query')}`);
  return query;
}
