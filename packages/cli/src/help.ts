import type { CommandSpec, CommandTable, HelpRequest, OptionSpec } from './command-table.js';

/**
 * The help of the whole CLI, one group or one command, drawn from the table. Its first line is
 * the usage line and a blank line follows it (scripts/admin.mjs joins several CLIs' helps there).
 */
export function formatHelp(table: CommandTable, request: HelpRequest = { name: 'help' }): string {
  const { group, command } = request;
  const commands = group === undefined ? undefined : table.groups[group];
  if (group !== undefined && commands !== undefined) {
    const spec = command === undefined ? undefined : commands[command];
    if (command !== undefined && spec !== undefined) {
      return [`usage: ${table.program} ${synopsis(`${group} ${command}`, spec)}`, '', ...describe(spec, '')].join('\n');
    }
    return withNotes(table, [`usage: ${table.program} ${group} <command> [arguments] [options]`, '', ...groupLines(group, commands)]);
  }
  const sections = Object.entries(table.groups).map(([name, cmds]) => groupLines(name, cmds).join('\n'));
  return withNotes(table, [`usage: ${table.program} <group> <command> [arguments] [options]`, '', sections.join('\n\n')]);
}

function withNotes(table: CommandTable, lines: string[]): string {
  return [...lines, ...(table.notes ? ['', table.notes] : [])].join('\n');
}

function groupLines(group: string, commands: CommandTable['groups'][string]): string[] {
  return Object.entries(commands).flatMap(([name, spec]) => [`  ${synopsis(`${group} ${name}`, spec)}`, ...describe(spec, '      ')]);
}

/** `accounts create --name NAME [--plan PLAN]`: arguments, then required options, then the others in brackets. */
function synopsis(name: string, spec: CommandSpec): string {
  const options = Object.entries(spec.options ?? {});
  const required = options.filter(([, o]) => o.required).map(([k, o]) => flag(k, o));
  const optional = options.filter(([, o]) => !o.required).map(([k, o]) => `[${flag(k, o)}]`);
  return [name, ...(spec.args ?? []), ...required, ...optional].join(' ');
}

function describe(spec: CommandSpec, indent: string): string[] {
  const options = Object.entries(spec.options ?? {}).map(([k, o]) => [flag(k, o), explain(o)] as const);
  const width = Math.max(0, ...options.map(([f]) => f.length));
  return [`${indent}${spec.description}`, ...options.map(([f, text]) => `${indent}  ${f.padEnd(width)}  ${text}`)];
}

function flag(name: string, o: OptionSpec): string {
  const value = o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : '';
  return `--${name}${value}${o.multiple ? ' ...' : ''}`;
}

function explain(o: OptionSpec): string {
  return o.default === undefined ? o.description : `${o.description} (default ${o.default})`;
}
