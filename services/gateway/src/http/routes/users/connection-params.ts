import type { Request } from 'express';
import { compile, connectionPathSchema, describeErrors } from '@tes/contracts';
import { AppError } from '@tes/errors';

/** Path parameters checked against the shared schema: 400 invalid_request naming the parameter. */
export function connectionParams(req: Request): { user_id: string; service?: string } {
  const params: Record<string, string> = {};
  for (const name of ['user_id', 'service']) {
    const v = req.params[name];
    if (typeof v === 'string') params[name] = v;
  }
  const check = compile<{ user_id: string; service?: string }>(connectionPathSchema);
  if (!check(params)) throw new AppError('invalid_request', `path parameter ${describeErrors(check.errors, 'path')}`);
  return params;
}
