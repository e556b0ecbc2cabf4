/**
 * The driver's (and mongoose's) names for "the database is out of reach": a lost or refused
 * connection, no server selected in time, a pool cleared or a client closed under a request.
 * Temporary by nature: a request answers 503 and retries, a step is retried, never failed.
 * By name, not instanceof: mongoose bundles its own copy of the driver.
 */
const DATABASE_UNAVAILABLE = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNotConnectedError',
  'MongoPoolClearedError',
  'MongoTopologyClosedError',
]);

/** Whether `err` says the database cannot be reached right now (it does not look inside wrappers). */
export function isDatabaseUnavailable(err: unknown): boolean {
  const name = (err as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' && DATABASE_UNAVAILABLE.has(name);
}
