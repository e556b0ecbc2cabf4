import { parseArgs } from 'node:util';

/** One `--name` option of a command; the help prints it with its description. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly description: string;
  /** The value's placeholder in the help (`--account ID`); string options only. */
  readonly value?: string;
  readonly multiple?: boolean;
  /** Refused when absent, before the command runs. */
  readonly required?: boolean;
  /** The value when the option is absent (string options). */
  readonly default?: string;
}

export interface CommandSpec {
  readonly description: string;
  /** Positional arguments, all required, by their name in the help (`accounts get ID`). */
  readonly args?: readonly string[];
  readonly options?: Readonly<Record<string, OptionSpec>>;
}

/** Every command of a CLI, by group then command (`accounts` → `create`); a command may be several words. */
export interface CommandTable {
  /** How an operator calls the CLI: the start of every usage line (`pnpm admin`). */
  readonly program: string;
  readonly groups: Readonly<Record<string, Readonly<Record<string, CommandSpec>>>>;
  /** Printed after the commands in the help of the whole CLI: environment, output, exit codes. */
  readonly notes?: string;
}

/**
 * A mistake in the command line. Thrown by parseCommandLine (exit 2: it does not match the table)
 * and by the commands for a value they refuse (the CLI answers invalid_request, exit 1).
 */
export class UsageError extends Error {
  readonly code = 'invalid_request';
}

/** The value if it is one of `choices`: `oneOf('--env', v, ENVIRONMENTS)` refuses "--env must be test or live". */
export function oneOf<C extends string>(flag: string, value: string, choices: readonly C[]): C {
  if ((choices as readonly string[]).includes(value)) return value as C;
  throw new UsageError(`${flag} must be ${choices.slice(0, -1).join(', ')} or ${choices.at(-1) ?? ''}`);
}

type ValueOf<O> = O extends { type: 'boolean' } ? boolean : O extends { multiple: true } ? string[] : string;
type IsRequired<O> = O extends { required: true } | { default: string } ? true : false;
type Values<Os> = { [K in keyof Os as IsRequired<Os[K]> extends true ? K : never]: ValueOf<Os[K]> } & {
  [K in keyof Os as IsRequired<Os[K]> extends true ? never : K]?: ValueOf<Os[K]>;
};
type Parsed<G extends string, C extends string, S> = {
  name: `${G} ${C}`;
  args: S extends { args: infer A extends readonly string[] } ? { readonly [I in keyof A]: string } : readonly [];
  values: S extends { options: infer Os } ? Values<Os> : Record<never, never>;
};

/** The command line as the table's types: a switch on `name` narrows `args` and `values`. */
export type ParsedCommand<T extends CommandTable> = {
  [G in keyof T['groups'] & string]: {
    [C in keyof T['groups'][G] & string]: Parsed<G, C, T['groups'][G][C]>;
  }[keyof T['groups'][G] & string];
}[keyof T['groups'] & string];

/** What `--help` asks for: the whole CLI, one group, or one command. */
export interface HelpRequest {
  name: 'help';
  group?: string;
  command?: string;
}

const HELP = ['--help', '-h'];

export function isHelp(parsed: { name: string }): parsed is HelpRequest {
  return parsed.name === 'help';
}

/**
 * Reads `<group> <command> [args] [--options]` against the table (node:util parseArgs per command);
 * no arguments, `help` or `--help` ask for help. Throws UsageError naming what is wrong.
 */
export function parseCommandLine<T extends CommandTable>(table: T, argv: readonly string[]): ParsedCommand<T> | HelpRequest {
  const [group, ...rest] = argv;
  if (group === undefined || group === 'help' || HELP.includes(group)) return { name: 'help' };
  const commands = table.groups[group];
  if (!commands) throw new UsageError(`unknown command "${argv.slice(0, 2).join(' ')}": see ${table.program} --help`);
  const command = matchCommand(Object.keys(commands), rest);
  if (command === undefined) {
    if (rest.length === 0 || HELP.includes(rest[0] ?? '')) return { name: 'help', group };
    throw new UsageError(`unknown command "${group} ${rest[0] ?? ''}": see ${table.program} ${group} --help`);
  }
  const spec = commands[command] as CommandSpec;
  const name = `${group} ${command}`;
  const tail = rest.slice(command.split(' ').length);
  const dashDash = tail.indexOf('--');
  if ((dashDash < 0 ? tail : tail.slice(0, dashDash)).some((a) => HELP.includes(a))) return { name: 'help', group, command };

  const options = spec.options ?? {};
  const see = `see ${table.program} ${name} --help`;
  const { values, positionals, tokens } = parseArgs({
    args: [...tail],
    options: Object.fromEntries(
      Object.entries(options).map(([k, o]) => [
        k,
        { type: o.type, multiple: o.multiple === true, ...(o.default === undefined ? {} : { default: o.default }) },
      ]),
    ),
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  // Non-strict parsing, checked here, so that each mistake gets one plain sentence.
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const option = options[token.name];
    if (!option) throw new UsageError(`unknown option ${token.rawName} for "${name}": ${see}`);
    if (option.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))))
      throw new UsageError(`${token.rawName} needs a value (one starting with "-" goes as ${token.rawName}=-...)`);
    if (option.type === 'boolean' && token.value !== undefined) throw new UsageError(`${token.rawName} takes no value`);
  }
  for (const [key, option] of Object.entries(options)) {
    if (option.required && values[key] === undefined) throw new UsageError(`--${key} is required`);
  }
  const expected = spec.args ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(
      `"${name}" takes ${expected.length === 0 ? 'no arguments' : expected.join(' ')}, got ${positionals.length === 0 ? 'none' : `"${positionals.join(' ')}"`}: ${see}`,
    );
  }
  return { name, args: positionals, values } as unknown as ParsedCommand<T>;
}

/** The longest command name whose words start `words`. */
function matchCommand(names: string[], words: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const name of names) {
    const parts = name.split(' ');
    if (parts.every((p, i) => words[i] === p) && (best === undefined || parts.length > best.split(' ').length)) best = name;
  }
  return best;
}
