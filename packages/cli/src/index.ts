import { isHelp, parseCommandLine, UsageError, type CommandTable, type ParsedCommand } from './command-table.js';
import { formatHelp } from './help.js';

export {
  isHelp,
  oneOf,
  parseCommandLine,
  UsageError,
  type CommandSpec,
  type CommandTable,
  type HelpRequest,
  type ParsedCommand,
} from './command-table.js';
export { formatHelp } from './help.js';

/**
 * For a CLI's entry point: the command to run, or the process ends here, with the help on stdout
 * (exit 0) or a usage error as one line `{"error":{"code":"invalid_request","message"}}` on stderr (exit 2).
 */
export function commandOrExit<T extends CommandTable>(table: T, argv: readonly string[]): ParsedCommand<T> {
  try {
    const parsed = parseCommandLine(table, argv);
    if (!isHelp(parsed)) return parsed;
    process.stdout.write(`${formatHelp(table, parsed)}\n`);
    process.exit(0);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${JSON.stringify({ error: { code: err.code, message: err.message } })}\n`);
    process.exit(2);
  }
}
