import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/** `pnpm admin --help` and the usage errors of the operator CLIs (built by `tsc -b`); no database needed. */
const admin = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'admin.mjs'), ...args], { encoding: 'utf8', input: '' });
const cli = (service: string, ...args: string[]) =>
  spawnSync(process.execPath, [path.join(REPO_ROOT, 'services', service, 'dist', 'cli.js'), ...args], { encoding: 'utf8' });

const COMMANDS = {
  gateway: [
    'accounts create',
    'accounts get',
    'accounts disable',
    'accounts enable',
    'accounts set-limits',
    'keys create',
    'keys list',
    'keys roll',
    'keys revoke',
    'owners create',
    'owners list',
    'tools register',
    'tools list',
    'tools delete',
  ],
  'webhook-dispatcher': [
    'secrets init',
    'secrets rotate',
    'secrets reseal',
    'webhooks set',
    'webhooks get',
    'deliveries list',
    'deliveries redeliver',
  ],
  'oauth-vault': ['vault reencrypt', 'vault settings-link', 'vault connections list'],
};

describe('pnpm admin --help', () => {
  const help = admin('--help');

  it('lists every command of every group', () => {
    expect(help.status).toBe(0);
    for (const name of Object.values(COMMANDS).flat()) expect(help.stdout).toMatch(new RegExp(`^  ${name}( |$)`, 'm'));
  });

  it("holds each service CLI's help: every command with its options", () => {
    for (const service of Object.keys(COMMANDS)) {
      const own = cli(service, '--help');
      expect(own.status).toBe(0);
      const body = own.stdout.slice(own.stdout.indexOf('\n\n') + 2).trimEnd();
      expect(help.stdout).toContain(body);
    }
    expect(help.stdout).toMatch(/^ {8}--grace-hours N +hours the previous secret stays valid/m);
  });

  it("prints one group's or one command's help", () => {
    const group = admin('keys', '--help');
    expect(group.status).toBe(0);
    expect(group.stdout).toMatch(/^usage: pnpm admin keys <command>/);
    expect(group.stdout).toContain('  keys revoke --key KEY_ID');
    expect(group.stdout).not.toContain('accounts create');
    const command = admin('vault', 'settings-link', '--help');
    expect(command.stdout).toMatch(/^usage: pnpm admin vault settings-link --account ID --env test\|live --user ID \[--ttl SECONDS\]/);
  });

  it('refuses an unknown group, command or option with one JSON line and exit 2', () => {
    for (const run of [
      admin('nope', 'x'),
      admin('accounts', 'explode'),
      admin('keys', 'list', '--acount', 'a'),
      cli('webhook-dispatcher', 'secrets', 'init', '--account'),
      cli('oauth-vault', 'reencrypt', '--now'),
    ]) {
      expect(run.status).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(JSON.parse(run.stderr)).toEqual({
        error: { code: 'invalid_request', message: expect.stringMatching(/unknown|needs a value/) },
      });
    }
  });
});
