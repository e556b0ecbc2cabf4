import { REDACTED } from '@tes/logger';

/*
 * What the task page masks before it shows a prompt or a step's input. A plan keeps what the
 * prompt said, so a prompt such as "fetch https://api.example.com with header Authorization:
 * Bearer …" puts a credential into the http step's `headers`: stored by the orchestrator and sent
 * to the executor as it is, but never shown.
 */

/** Field names whose values are credentials, whatever the value looks like (`X-Api-Key`, `access_token`, `password`, …). */
const SECRET_FIELD = /authoriz|^auth$|token|secret|passw|api[-_]?key|^key$|cookie|signature|credential|private[-_]?key|session/i;

/** Values that are credentials under any name. */
const SECRET_VALUES: RegExp[] = [
  /\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\bpk_(test|live)_[A-Za-z0-9]+/g,
  /\bwhsec_[A-Za-z0-9+/=_-]+/g,
  /\b(sk|rk)[-_][A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bya29\.[A-Za-z0-9._-]+/g,
  /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g,
];

/** A credential written out as `name: value` or `name=value` ("Authorization: Basic …", "header X-Api-Token: …"): the name stays. */
const SECRET_PAIR =
  /\b([\w-]*(?:authoriz|token|secret|passw|api[-_]?key|cookie|credential)[\w-]*)(\s*[:=]\s*)(?:(?:Basic|Bearer)\s+)?[^\s,;]+/gi;

/** `user:password@` in a URL, and query parameters with a secret's name (`?token=…`, `&api_key=…`). */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi;
const SECRET_PARAM = /([?&](?:[^=&\s#]*(?:token|secret|passw|api[-_]?key)[^=&\s#]*|key|sig|signature|code|auth))=[^&\s#]*/gi;

/** A string with every credential-looking part masked. */
export function maskText(text: string): string {
  let out = text.replace(URL_USERINFO, `$1${REDACTED}@`).replace(SECRET_PARAM, `$1=${REDACTED}`).replace(SECRET_PAIR, `$1$2${REDACTED}`);
  for (const pattern of SECRET_VALUES) out = out.replace(pattern, REDACTED);
  return out;
}

/** A JSON value with the values of secret-named fields and credential-looking strings masked, at any depth. */
export function maskValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskText(value);
  if (depth > 20 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => maskValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const filled = typeof v === 'string' ? v !== '' : typeof v === 'object' && v !== null;
    out[k] = SECRET_FIELD.test(k) && filled ? REDACTED : maskValue(v, depth + 1);
  }
  return out;
}
