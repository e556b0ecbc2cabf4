import { AppError, httpStatusOf, isApiErrorCode, toEnvelope } from './index.js';

describe('AppError', () => {
  it('maps each spec code to its HTTP status', () => {
    expect(httpStatusOf('invalid_request')).toBe(400);
    expect(httpStatusOf('missing_api_key')).toBe(401);
    expect(httpStatusOf('invalid_api_key')).toBe(401);
    expect(httpStatusOf('account_disabled')).toBe(403);
    expect(httpStatusOf('task_not_found')).toBe(404);
    expect(httpStatusOf('task_already_complete')).toBe(409);
    expect(httpStatusOf('prompt_too_long')).toBe(422);
    expect([httpStatusOf('no_matching_tool'), httpStatusOf('missing_input'), httpStatusOf('unsupported_request')]).toEqual([422, 422, 422]);
    expect(httpStatusOf('rate_limit_exceeded')).toBe(429);
    expect(httpStatusOf('internal_error')).toBe(500);
  });

  it('renders the spec envelope with code and message only', () => {
    const err = new AppError('task_not_found', 'No task task_1', { headers: { 'X-A': '1' } });
    expect(toEnvelope(err)).toEqual({ error: { code: 'task_not_found', message: 'No task task_1' } });
    expect(err.status).toBe(404);
  });

  it('adds the suggestion and what is missing when the error has them', () => {
    const err = new AppError('missing_input', 'subject is missing', {
      suggestion: 'Add a subject',
      missing: ['step 1 (gmail.send_email): subject'],
    });
    expect(toEnvelope(err)).toEqual({
      error: {
        code: 'missing_input',
        message: 'subject is missing',
        suggestion: 'Add a subject',
        missing: ['step 1 (gmail.send_email): subject'],
      },
    });
  });

  it('recognises only codes of the closed set', () => {
    expect(isApiErrorCode('prompt_too_long')).toBe(true);
    expect(isApiErrorCode('toString')).toBe(false);
    expect(isApiErrorCode('made_up')).toBe(false);
  });
});
