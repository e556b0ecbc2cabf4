import winston from 'winston';

/** Keys whose values never reach a log line, whatever their nesting. */
const SECRET_KEY =
  /^(authorization|cookie|set-cookie|x-service-signature|webhook-signature|password|secret|client_secret|api_key|apikey|token|access_token|refresh_token|id_token|code|code_verifier|key|private_key|webhook_secret|whsec|encryption_key)$/i;
/** Values that look like credentials even under an innocent key. */
const SECRET_VALUE = /\b(pk_(test|live)_[A-Za-z0-9]+|whsec_[A-Za-z0-9+/=_-]+|Bearer\s+[A-Za-z0-9._~+/=-]+)/g;

export const REDACTED = '[redacted]';

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return value;
  if (typeof value === 'string') return value.replace(SECRET_VALUE, REDACTED);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value instanceof Error) {
    return { name: value.name, message: redact(value.message, depth + 1), stack: redact(value.stack, depth + 1) };
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEY.test(k) && v !== undefined && v !== null ? REDACTED : redact(v, depth + 1);
    }
    return out;
  }
  return value;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    const v = info[key];
    info[key] = SECRET_KEY.test(key) && v !== undefined && v !== null ? REDACTED : redact(v);
  }
  return info;
});

export interface Logger {
  debug(msg: string, meta?: Record<string, unknown>): void;
  info(msg: string, meta?: Record<string, unknown>): void;
  warn(msg: string, meta?: Record<string, unknown>): void;
  error(msg: string, meta?: Record<string, unknown>): void;
  child(context: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Write somewhere else than stdout (tests). */
  stream?: NodeJS.WritableStream;
}

/** winston's (npm) levels: a lower number is more severe. */
const LEVELS: Record<string, number> = { error: 0, warn: 1, info: 2, http: 3, verbose: 4, debug: 5, silly: 6 };

/** JSON lines on stdout, every line redacted. LOG_LEVEL picks the level. */
export function createLogger(options: LoggerOptions): Logger {
  const transport = options.stream ? new winston.transports.Stream({ stream: options.stream }) : new winston.transports.Console();
  const level = options.level ?? process.env['LOG_LEVEL'] ?? 'info';
  const base = winston.createLogger({
    level,
    defaultMeta: { service: options.service },
    format: winston.format.combine(redactFormat(), winston.format.timestamp(), winston.format.json()),
    transports: [transport],
  });
  // A line below the level is dropped here, before winston builds, formats and streams it.
  const max = LEVELS[level] ?? LEVELS['info']!;
  const on = (l: string) => (LEVELS[l] ?? 0) <= max;
  return wrap(() => base, { debug: on('debug'), info: on('info'), warn: on('warn'), error: on('error') });
}

/** A child logger is made only when a line is actually written (most per-message children never write one). */
function wrap(make: () => winston.Logger, on: Record<'debug' | 'info' | 'warn' | 'error', boolean>): Logger {
  let made: winston.Logger | undefined;
  const w = () => (made ??= make());
  return {
    debug: (msg, meta) => {
      if (on.debug) w().debug(msg, meta);
    },
    info: (msg, meta) => {
      if (on.info) w().info(msg, meta);
    },
    warn: (msg, meta) => {
      if (on.warn) w().warn(msg, meta);
    },
    error: (msg, meta) => {
      if (on.error) w().error(msg, meta);
    },
    child: (context) => wrap(() => w().child(context), on),
  };
}
