import { KeyRingError } from '@tes/sealing';
import { runService } from '@tes/service';
import { SERVICE, startDispatcher } from './composition.js';
import { configSchema, type Config } from './config.js';

// A missing or malformed WEBHOOK_SECRET_KEYS is one line too.
await runService<Config>({
  name: SERVICE,
  configSchema,
  knownErrors: [KeyRingError],
  start: ({ config, logger, metrics }) => startDispatcher(config, logger, metrics),
});
