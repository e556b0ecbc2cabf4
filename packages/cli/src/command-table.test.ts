import { formatHelp, oneOf, parseCommandLine, UsageError, type CommandSpec, type CommandTable } from './index.js';

const TABLE = {
  program: 'pnpm admin',
  groups: {
    accounts: {
      create: {
        description: 'A new account.',
        options: {
          name: { type: 'string', value: 'NAME', required: true, description: "the account's name" },
          plan: { type: 'string', value: 'PLAN', default: 'basic', description: 'the plan' },
          tag: { type: 'string', value: 'T', multiple: true, description: 'a tag' },
          quiet: { type: 'boolean', description: 'print nothing' },
        },
      },
      get: { description: 'One account.', args: ['ID'] },
    },
    vault: {
      reencrypt: { description: 'Re-seals every token.' },
      'connections list': {
        description: "A user's connections.",
        options: { user: { type: 'string', value: 'ID', required: true, description: 'the user' } },
      },
    },
  },
  notes: 'Env: MONGO_URL.',
} as const satisfies CommandTable;

function usageError(argv: string[]): string {
  try {
    parseCommandLine(TABLE, argv);
  } catch (err) {
    if (err instanceof UsageError) return err.message;
    throw err;
  }
  throw new Error(`${argv.join(' ')} parsed`);
}

describe('parseCommandLine', () => {
  it('reads a command with its arguments, options, defaults and repeated options', () => {
    expect(parseCommandLine(TABLE, ['accounts', 'create', '--name', 'acme', '--tag', 'a', '--tag=b', '--quiet'])).toEqual({
      name: 'accounts create',
      args: [],
      values: { name: 'acme', plan: 'basic', tag: ['a', 'b'], quiet: true },
    });
    expect(parseCommandLine(TABLE, ['accounts', 'get', 'acct_1'])).toEqual({ name: 'accounts get', args: ['acct_1'], values: {} });
  });

  it('matches the longest command of several words', () => {
    expect(parseCommandLine(TABLE, ['vault', 'connections', 'list', '--user', 'u1'])).toMatchObject({
      name: 'vault connections list',
      values: { user: 'u1' },
    });
  });

  it('asks for the help of the whole CLI, a group or a command', () => {
    for (const argv of [[], ['help'], ['--help'], ['-h']]) expect(parseCommandLine(TABLE, argv)).toEqual({ name: 'help' });
    expect(parseCommandLine(TABLE, ['accounts'])).toEqual({ name: 'help', group: 'accounts' });
    expect(parseCommandLine(TABLE, ['accounts', '--help'])).toEqual({ name: 'help', group: 'accounts' });
    expect(parseCommandLine(TABLE, ['accounts', 'create', '--name', 'x', '-h'])).toEqual({
      name: 'help',
      group: 'accounts',
      command: 'create',
    });
  });

  it('refuses an unknown command or option, a missing value or option, and wrong arguments, in one line', () => {
    expect(usageError(['nope', 'x'])).toBe('unknown command "nope x": see pnpm admin --help');
    expect(usageError(['accounts', 'delete'])).toBe('unknown command "accounts delete": see pnpm admin accounts --help');
    expect(usageError(['accounts', 'create', '--name', 'a', '--nmae', 'b'])).toBe(
      'unknown option --nmae for "accounts create": see pnpm admin accounts create --help',
    );
    expect(usageError(['accounts', 'create', '--name'])).toBe('--name needs a value (one starting with "-" goes as --name=-...)');
    expect(usageError(['accounts', 'create', '--name', '--quiet'])).toMatch(/^--name needs a value/);
    expect(usageError(['accounts', 'create', '--name', 'a', '--quiet=yes'])).toBe('--quiet takes no value');
    expect(usageError(['accounts', 'create'])).toBe('--name is required');
    expect(usageError(['accounts', 'get'])).toBe('"accounts get" takes ID, got none: see pnpm admin accounts get --help');
    expect(usageError(['accounts', 'get', 'a', 'b'])).toBe('"accounts get" takes ID, got "a b": see pnpm admin accounts get --help');
    expect(usageError(['vault', 'reencrypt', 'now'])).toBe(
      '"vault reencrypt" takes no arguments, got "now": see pnpm admin vault reencrypt --help',
    );
    for (const argv of [['nope'], ['accounts', 'create', '-x']]) expect(() => parseCommandLine(TABLE, argv)).toThrow(UsageError);
  });
});

describe('oneOf', () => {
  it('returns an allowed value and names the choices otherwise', () => {
    expect(oneOf('--env', 'live', ['test', 'live'])).toBe('live');
    expect(() => oneOf('--env', 'prod', ['test', 'live'])).toThrow('--env must be test or live');
    expect(() => oneOf('--plan', 'x', ['a', 'b', 'c'])).toThrow('--plan must be a, b or c');
  });
});

describe('formatHelp', () => {
  it('lists every command of every group with each option, its value and description, then the notes', () => {
    const help = formatHelp(TABLE);
    expect(help.split('\n')[0]).toBe('usage: pnpm admin <group> <command> [arguments] [options]');
    expect(help.split('\n')[1]).toBe('');
    for (const [group, commands] of Object.entries(TABLE.groups)) {
      for (const [name, spec] of Object.entries<CommandSpec>(commands)) {
        expect(help).toContain(`  ${group} ${name}`);
        expect(help).toContain(spec.description);
        for (const [option, o] of Object.entries(spec.options ?? {})) {
          const line = `--${option}${o.type === 'string' ? ` ${o.value}` : ''}`;
          expect(help.split('\n').filter((l) => l.includes(line) && l.includes(o.description))).toHaveLength(1);
        }
      }
    }
    expect(help).toContain('  accounts create --name NAME [--plan PLAN] [--tag T ...] [--quiet]');
    expect(help).toContain('the plan (default basic)');
    expect(help).toContain('  accounts get ID');
    expect(help.endsWith('Env: MONGO_URL.')).toBe(true);
  });

  it('prints one group, or one command', () => {
    const group = formatHelp(TABLE, { name: 'help', group: 'vault' });
    expect(group.split('\n')[0]).toBe('usage: pnpm admin vault <command> [arguments] [options]');
    expect(group).toContain('vault connections list --user ID');
    expect(group).not.toContain('accounts');
    const command = formatHelp(TABLE, { name: 'help', group: 'accounts', command: 'get' });
    expect(command).toBe('usage: pnpm admin accounts get ID\n\nOne account.');
  });
});
