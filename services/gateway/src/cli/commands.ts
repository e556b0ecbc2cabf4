import type { FromSchema } from 'json-schema-to-ts';
import type { CommandTable } from '@tes/cli';
import { configSchema } from '../config.js';

const account = { type: 'string', value: 'ID', required: true, description: 'the account' } as const;
const env = { type: 'string', value: 'test|live', required: true, description: 'the environment' } as const;
const key = { type: 'string', value: 'KEY_ID', required: true, description: 'the key' } as const;

/** The gateway's operator commands: `pnpm admin <group> <command>` for the groups it owns. */
export const COMMANDS = {
  program: 'pnpm admin',
  groups: {
    accounts: {
      create: {
        description: 'A new account with a test and a live API key.',
        options: {
          name: { type: 'string', value: 'NAME', required: true, description: "the account's name" },
          plan: { type: 'string', value: 'PLAN', default: 'prototyping', description: 'prototyping, production or enterprise' },
        },
      },
      get: { description: "An account's plan, status and limits.", args: ['ID'] },
      disable: { description: "Refuses the account's API keys.", args: ['ID'] },
      enable: { description: "Accepts the account's API keys again.", args: ['ID'] },
      'set-limits': {
        description: "Overrides the plan's limits.",
        args: ['ID'],
        options: {
          rpm: { type: 'string', value: 'N', description: 'requests per minute' },
          concurrency: { type: 'string', value: 'N', description: 'tasks running at once' },
        },
      },
    },
    keys: {
      create: {
        description: 'A new API key (printed once).',
        options: { account, env, name: { type: 'string', value: 'NAME', description: 'a name for it (1 to 64 characters)' } },
      },
      list: {
        description: "The account's keys with name, status, created, last used (to the minute) and expiry (never the key itself).",
        options: { account },
      },
      roll: {
        description: 'A new key of the same environment and name (printed once); the old one stops working at the chosen time.',
        options: {
          key,
          'expires-in': { type: 'string', value: 'now|1h|24h|7d', default: 'now', description: 'when the old key stops working' },
        },
      },
      revoke: { description: 'Revokes a key at once (an expiring one too).', options: { key } },
    },
    owners: {
      create: {
        description: "A dashboard sign-in for the account's owner.",
        options: {
          account,
          email: { type: 'string', value: 'EMAIL', required: true, description: 'the sign-in address' },
          'password-stdin': { type: 'boolean', description: 'read the password from standard input (preferred)' },
          password: { type: 'string', value: 'PASSWORD', description: 'the password (shows in the process list and shell history)' },
        },
      },
      list: { description: "The account's owners.", options: { account } },
    },
    tools: {
      register: {
        description: 'Registers a custom tool (through the running services).',
        options: {
          account,
          env,
          file: { type: 'string', value: 'MANIFEST.json', required: true, description: 'the manifest; - reads standard input' },
        },
      },
      list: { description: "The account's custom tools.", options: { account, env } },
      delete: {
        description: 'Deletes a custom tool.',
        options: { account, env, name: { type: 'string', value: 'NAME', required: true, description: "the tool's name" } },
      },
    },
  },
  notes: `Env (gateway): MONGO_URL, MONGO_DB (default tes_gateway); AMQP_URL, AMQP_NAMESPACE (to tell the running gateways of a change, and for tools).
Prints JSON on stdout; on bad input exits 1 with {"error":{"code","message"}} on stderr (2 for a command line that does not parse).`,
} as const satisfies CommandTable;

/** The variables the CLI reads: the database, and the broker to announce changes. */
export const cliConfigSchema = {
  type: 'object',
  properties: {
    MONGO_URL: configSchema.properties.MONGO_URL,
    MONGO_DB: configSchema.properties.MONGO_DB,
    AMQP_URL: configSchema.properties.AMQP_URL,
    AMQP_NAMESPACE: configSchema.properties.AMQP_NAMESPACE,
  },
  required: ['MONGO_URL', 'MONGO_DB', 'AMQP_URL', 'AMQP_NAMESPACE'],
} as const;

export type CliConfig = FromSchema<typeof cliConfigSchema>;
