import { readFileSync } from 'node:fs';
import { KeyRing, KeyRingError } from '@tes/sealing';
import type { CliConfig } from './config.js';

const NAME = 'WEBHOOK_SECRET_KEYS';

/**
 * The development ring, published here: it seals nothing from anyone. Fixed rather than random
 * (the vault's ephemeral key) because the dispatcher, its replicas and the operator CLI must all
 * open what another wrote, and a secret lost at restart cannot be asked for again like a token.
 */
export const DEVELOPMENT_KEYS = 'dev:/2Y8d5ITmG5dyIU7IxcNWmYcfKV2BgZ+LK/oblDu8qA=';

type KeySettings = Pick<CliConfig, 'NODE_ENV' | 'WEBHOOK_SECRET_KEYS' | 'WEBHOOK_SECRET_KEYS_FILE'>;

/**
 * The key ring the signing secrets are sealed with: WEBHOOK_SECRET_KEYS, or the file named by
 * WEBHOOK_SECRET_KEYS_FILE. Mandatory with NODE_ENV=production; otherwise the development ring,
 * with a warning. Throws KeyRingError for a missing or malformed ring.
 */
export function loadSecretKeys(config: KeySettings, warn: (message: string) => void = () => undefined): KeyRing {
  const direct = config.WEBHOOK_SECRET_KEYS;
  const file = config.WEBHOOK_SECRET_KEYS_FILE;
  if (direct && file) throw new KeyRingError(`${NAME} and ${NAME}_FILE are both set; set one`);
  const spec = file ? readKeyFile(file) : direct;
  if (spec) return KeyRing.parse(spec, NAME);
  if (config.NODE_ENV === 'production') throw new KeyRingError(`${NAME} (or ${NAME}_FILE) must be set in production (NODE_ENV=production)`);
  warn(`${NAME} is not set: webhook secrets are sealed with the published development key (development only)`);
  return KeyRing.parse(DEVELOPMENT_KEYS, NAME);
}

function readKeyFile(file: string): string {
  let value: string;
  try {
    value = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new KeyRingError(`${NAME}_FILE (${file}) cannot be read: ${(err as Error).message}`);
  }
  if (!value) throw new KeyRingError(`${NAME}_FILE (${file}) is empty`);
  return value;
}
