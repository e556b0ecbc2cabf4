import { MessageValidationError } from '@tes/contracts';
import { PoisonMessageError, isPermanentFailure } from './permanent-failure.js';

/** What the driver throws, as far as the decision reads it (the driver itself is not a dependency here). */
const server = (code: number, message = 'x', errorLabels: string[] = []) =>
  Object.assign(new Error(message), { name: 'MongoServerError', code, errorLabels });

describe('isPermanentFailure', () => {
  it('is permanent for a poison message and a message that fails its schema', () => {
    expect(isPermanentFailure(new PoisonMessageError('no'))).toBe(true);
    expect(isPermanentFailure(new MessageValidationError('bad'))).toBe(true);
  });

  it('is permanent when the database refuses the document', () => {
    expect(isPermanentFailure(server(2, `invalid key: "$x" (key must not start with '$' sign)`))).toBe(true);
    expect(isPermanentFailure(server(1, 'ERROR: unsupported Unicode escape sequence (SQLSTATE 22P05)'))).toBe(true);
    expect(isPermanentFailure(server(1, 'ERROR: stack depth limit exceeded (SQLSTATE 54001)'))).toBe(true);
    expect(isPermanentFailure(Object.assign(new Error('key a\u0000 must not contain null bytes'), { name: 'BSONError' }))).toBe(true);
  });

  it('is transient for outages: network errors, a stepping-down primary, a lost backend, retryable labels', () => {
    expect(isPermanentFailure(Object.assign(new Error('connect ECONNREFUSED'), { name: 'MongoNetworkError' }))).toBe(false);
    expect(isPermanentFailure(Object.assign(new Error('timed out'), { name: 'MongoServerSelectionError' }))).toBe(false);
    expect(isPermanentFailure(server(189, 'PrimarySteppedDown'))).toBe(false);
    expect(isPermanentFailure(server(91, 'ShutdownInProgress'))).toBe(false);
    expect(isPermanentFailure(server(1, 'ERROR: terminating connection due to administrator command (SQLSTATE 57P01)'))).toBe(false);
    expect(isPermanentFailure(server(1, 'failed to connect to postgres'))).toBe(false);
    expect(isPermanentFailure(server(2, 'x', ['RetryableWriteError']))).toBe(false);
    expect(isPermanentFailure(new Error('anything else'))).toBe(false);
    expect(isPermanentFailure('a string')).toBe(false);
  });
});
