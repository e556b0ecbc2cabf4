import { readFileSync } from 'node:fs';

/** Thrown for a missing or malformed secret; main.ts prints it and exits. */
export class VaultConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VaultConfigError';
  }
}

/**
 * `NAME` from the environment, or the content of the file named by `NAME_FILE`
 * (Docker/Kubernetes secrets), trimmed. Setting both is an error: one source of truth.
 */
export function readSecret(env: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const direct = text(env[name]);
  const file = text(env[`${name}_FILE`]);
  if (direct && file) throw new VaultConfigError(`${name} and ${name}_FILE are both set; set one`);
  if (file) {
    try {
      const value = readFileSync(file, 'utf8').trim();
      if (!value) throw new VaultConfigError(`${name}_FILE (${file}) is empty`);
      return value;
    } catch (err) {
      if (err instanceof VaultConfigError) throw err;
      throw new VaultConfigError(`${name}_FILE (${file}) cannot be read: ${(err as Error).message}`);
    }
  }
  return direct || undefined;
}
