#!/usr/bin/env node
/** The `tes` command: see `tes --help` and docs/sdk.md. */
import { runCli } from './cli/main.js';

const stopped = new Promise((resolve) => {
  process.once('SIGINT', resolve);
  process.once('SIGTERM', resolve);
});

const code = await runCli(process.argv.slice(2), {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stopped,
});
// exit once everything written has been handed to the OS (keep-alive sockets must not hold the process)
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
