import { UsageError } from '@tes/cli';
import { parseCommand } from './commands.js';

function error(argv: string[]): string {
  try {
    parseCommand(argv);
  } catch (err) {
    if (err instanceof UsageError) return `${err.code}: ${err.message}`;
    throw err;
  }
  throw new Error('no error');
}

describe('CLI arguments', () => {
  it('parses each command', () => {
    expect(parseCommand(['secrets', 'init', '--account', 'acc_1'])).toEqual({ name: 'secrets init', account: 'acc_1' });
    expect(parseCommand(['secrets', 'rotate', '--account', 'acc_1', '--env', 'live'])).toEqual({
      name: 'secrets rotate',
      account: 'acc_1',
      env: 'live',
      graceHours: 24,
    });
    expect(parseCommand(['webhooks', 'set', '--account', 'a', '--env', 'test', '--url', 'http://127.0.0.1/x'])).toMatchObject({
      url: 'http://127.0.0.1/x',
    });
    expect(parseCommand(['deliveries', 'list', '--task', 'task_1'])).toEqual({ name: 'deliveries list', task: 'task_1' });
    expect(parseCommand(['deliveries', 'list', '--account', 'a', '--env', 'live'])).toEqual({
      name: 'deliveries list',
      account: 'a',
      env: 'live',
      limit: 50,
    });
    expect(parseCommand(['deliveries', 'redeliver', '--event', 'evt_task_1_3'])).toEqual({
      name: 'deliveries redeliver',
      event: 'evt_task_1_3',
    });
    expect(parseCommand([])).toEqual({ name: 'help' });
    expect(parseCommand(['deliveries', '--help'])).toEqual({ name: 'help', group: 'deliveries' });
  });

  it('answers invalid_request naming what is wrong', () => {
    expect(error(['secrets', 'init'])).toBe('invalid_request: --account is required');
    expect(error(['webhooks', 'set', '--account', 'a', '--env', 'prod', '--url', 'x'])).toBe('invalid_request: --env must be test or live');
    expect(error(['webhooks', 'get', '--account', 'a b', '--env', 'test'])).toMatch(/--account must be/);
    expect(error(['secrets', 'rotate', '--account', 'a', '--env', 'test', '--grace-hours', 'x'])).toMatch(/--grace-hours must be a number/);
    expect(error(['deliveries', 'list'])).toBe('invalid_request: --task or --account is required');
    expect(error(['deliveries', 'list', '--task', 't', '--account', 'a'])).toMatch(/not both/);
    expect(error(['secrets', 'init', '--acount', 'a'])).toMatch(/invalid_request: .*acount/i);
    expect(error(['nope', 'nothing'])).toBe('invalid_request: unknown command "nope nothing": see pnpm admin --help');
    expect(error(['secrets', 'nothing'])).toBe('invalid_request: unknown command "secrets nothing": see pnpm admin secrets --help');
  });
});
