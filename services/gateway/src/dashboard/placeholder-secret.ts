/**
 * Why a configured secret is a placeholder rather than a random value, or undefined when it looks
 * random. Production refuses such a DASHBOARD_SESSION_SECRET: anyone who has read the example
 * files (or guesses `aaaa…`) could sign dashboard sessions with it. Random output of
 * `openssl rand -base64 32` (or `-hex 32`) passes every test here.
 */
const PLACEHOLDER_WORDS = [
  'change',
  'replace',
  'placeholder',
  'example',
  'dev-only',
  'devonly',
  'insecure',
  'default',
  'secret',
  'password',
];
/** Random base64 of 32 bytes has about 28 distinct characters, random hex 16: far above this. */
const MIN_DISTINCT = 10;

export function placeholderSecretReason(secret: string): string | undefined {
  const lower = secret.toLowerCase().replace(/_/g, '-');
  const word = PLACEHOLDER_WORDS.find((w) => lower.includes(w));
  if (word !== undefined) return `it contains "${word}"`;
  if (new Set(secret).size < MIN_DISTINCT) return `it has fewer than ${MIN_DISTINCT} distinct characters`;
  // A shorter unit repeated (abcdabcd…): the period is the shortest shift that maps it onto itself.
  for (let period = 1; period <= secret.length / 2; period++) {
    if (secret.slice(period) === secret.slice(0, -period)) return 'it repeats a shorter value';
  }
  return undefined;
}
