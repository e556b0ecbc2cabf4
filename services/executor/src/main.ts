import { runService } from '@tes/service';
import { SERVICE, startExecutor } from './composition.js';
import { configSchema, type Config } from './config.js';

await runService<Config>({ name: SERVICE, configSchema, start: startExecutor });
