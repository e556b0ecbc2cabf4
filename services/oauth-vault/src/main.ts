import { KeyRingError } from '@tes/sealing';
import { runService } from '@tes/service';
import { SERVICE, startVault } from './composition.js';
import { configSchema, type Config } from './config.js';
import { VaultConfigError } from './domain/secrets.js';

// Missing production secrets, a malformed key ring or provider setting: one line too.
await runService<Config>({ name: SERVICE, configSchema, knownErrors: [VaultConfigError, KeyRingError], start: startVault });
