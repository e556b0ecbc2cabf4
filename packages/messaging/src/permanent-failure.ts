import { MessageValidationError } from '@tes/contracts';

/** A handler throws this when the message can never succeed: dead-letter it at once. */
export class PoisonMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonMessageError';
  }
}

/**
 * MongoDB server error codes that say "not now" rather than "never": a lost or stepping-down
 * primary, a shutdown, a timeout, a write conflict (the driver's retryable codes and a few more).
 */
const TRANSIENT_CODES = new Set([
  6, 7, 24, 46, 50, 64, 89, 91, 112, 133, 134, 189, 202, 251, 262, 9001, 10058, 10107, 11600, 11601, 11602, 13435, 13436,
]);
/** The driver's labels of errors worth retrying. */
const TRANSIENT_LABELS = ['RetryableWriteError', 'TransientTransactionError', 'ResetPool', 'SystemOverloadedError'];
/**
 * FerretDB answers its PostgreSQL backend's errors as code 1 (InternalError), with the SQLSTATE
 * in the message. Only classes that blame the data are permanent: 22 data exception (a NUL
 * character: 22P05) and 54 program limit exceeded (too deep: 54001). Anything else (a lost
 * backend connection, 08xxx; an admin shutdown, 57Pxx) is retried like any outage.
 */
const PERMANENT_SQLSTATE = /\(SQLSTATE (22|54)[0-9A-Z]{3}\)/;

interface MongoLikeError {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  errorLabels?: unknown;
}

/**
 * Whether a handler's failure would fail the same way on every attempt: the message is then
 * dead-lettered at once, not retried (a serial partition would wait on it meanwhile). Permanent:
 * PoisonMessageError, a message that fails its schema, the database refusing the document
 * (a MongoServerError whose code is not transient, a BSON serialization error, a mongoose
 * validation or cast error). Anything else, a network error included, is retried.
 */
export function isPermanentFailure(err: unknown): boolean {
  if (err instanceof PoisonMessageError || err instanceof MessageValidationError) return true;
  if (err === null || typeof err !== 'object') return false;
  // By name, not instanceof: mongoose bundles its own copy of the driver.
  const e = err as MongoLikeError;
  switch (e.name) {
    case 'BSONError':
    case 'ValidationError':
    case 'CastError':
      return true;
    case 'MongoServerError':
    case 'MongoBulkWriteError':
      return isPermanentServerError(e);
    default:
      return false;
  }
}

function isPermanentServerError(e: MongoLikeError): boolean {
  if (typeof e.code !== 'number') return false;
  const labels = Array.isArray(e.errorLabels) ? (e.errorLabels as unknown[]) : [];
  if (labels.some((l) => TRANSIENT_LABELS.includes(String(l)))) return false;
  if (e.code === 1) return PERMANENT_SQLSTATE.test(String(e.message));
  return !TRANSIENT_CODES.has(e.code);
}
