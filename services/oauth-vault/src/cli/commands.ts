import type { CommandTable } from '@tes/cli';

const user = {
  account: { type: 'string', value: 'ID', required: true, description: 'the account' },
  env: { type: 'string', value: 'test|live', required: true, description: 'the environment' },
  user: { type: 'string', value: 'ID', required: true, description: "the account's end user" },
} as const;

/** The vault's operator commands: `pnpm admin vault <command>` (the CLI also takes them without the `vault` word). */
export const COMMANDS = {
  program: 'pnpm admin',
  groups: {
    vault: {
      reencrypt: { description: 'Re-seals every stored token and custom provider secret under the current key of VAULT_KEYS.' },
      'settings-link': {
        description: "A signed, expiring link to the user's connection settings page.",
        options: {
          ...user,
          ttl: { type: 'string', value: 'SECONDS', description: 'the link lifetime (default SETTINGS_LINK_TTL_S, 3600)' },
        },
      },
      'connections list': { description: "A user's connections (never a token).", options: user },
    },
  },
  notes: `Env (oauth-vault): MONGO_URL, MONGO_DB (default tes_oauth_vault), VAULT_KEYS or VAULT_KEYS_FILE (reencrypt, connections list);
VAULT_STATE_SECRET or VAULT_STATE_SECRET_FILE, PUBLIC_BASE_URL, SETTINGS_LINK_TTL_S (settings-link).
Prints JSON on stdout; on bad input exits 1 with {"error":{"code","message"}} on stderr (2 for a command line that does not parse).`,
} as const satisfies CommandTable;
