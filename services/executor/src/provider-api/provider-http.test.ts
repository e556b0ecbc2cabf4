import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import type { StepRun } from '@tes/contracts';
import { createLogger } from '@tes/logger';
import type { SandboxStore } from '../domain/sandbox.js';
import { DEFAULT_SETTINGS, ToolError, type ToolContext } from '../tools/tool.js';
import { classifyGoogle } from './google.js';
import { callProvider, type ProviderRequest } from './provider-http.js';

/**
 * callProvider against a real local HTTP server answering in the providers' wire formats
 * (GitHub's and Google's documented error bodies): the refusals no fake provider produces.
 */
describe('callProvider: what a refused request tells the user', () => {
  let server: http.Server;
  let base: string;
  /** The next answer: status and JSON body. */
  let answer: { status: number; body: unknown };

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  function ctx(tool: string, action: string, input: Record<string, unknown>): ToolContext {
    const step = { task_id: 'task_1', step_index: 0, tool, action, input, idempotency_key: 'task_1:0', timeout_ms: 30_000 } as StepRun;
    return {
      step,
      input,
      signal: new AbortController().signal,
      env: {
        settings: { ...DEFAULT_SETTINGS, maxAttempts: 1 },
        logger: createLogger({ service: 'provider-http-test', stream: new PassThrough(), level: 'error' }),
        sandbox: {} as SandboxStore,
      },
    };
  }
  const req = (extra: Partial<ProviderRequest> = {}): ProviderRequest => ({
    service: 'github',
    scopes: [],
    anonymous: true,
    baseUrl: base,
    method: 'PUT',
    path: '/x',
    ...extra,
  });
  async function failure(c: ToolContext, r: ProviderRequest = req()): Promise<ToolError> {
    const err = await callProvider(c, r).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolError);
    return err as ToolError;
  }

  const merge = () => ctx('github', 'merge_pull_request', { owner: 'acme', repo: 'webapp', pull_number: 7 });

  it('409 (GitHub: "Head branch was modified"): recoverable, to look at it and retry', async () => {
    answer = { status: 409, body: { message: 'Head branch was modified. Review and try the merge again.' } };
    const e = await failure(merge());
    expect(e.code).toBe('step_failed');
    expect(e.recoverable).toBe(true);
    expect(e.message).toBe('GitHub rejected the request (HTTP 409): Head branch was modified. Review and try the merge again.');
    expect(e.suggestion).toBe(
      'GitHub reports a conflict with the current state for the repository acme/webapp and pull request #7 (it may already exist or have changed meanwhile): check it in GitHub, then retry the task',
    );
  });

  it('422 Validation Failed: not recoverable, quoting what GitHub says failed', async () => {
    answer = {
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }],
      },
    };
    const e = await failure(ctx('github', 'create_repository', { name: 'webapp' }), req({ method: 'POST' }));
    expect(e.recoverable).toBe(false);
    expect(e.message).toBe('GitHub rejected the request (HTTP 422): Validation Failed (name already exists on this account)');
    expect(e.suggestion).toBe(
      'GitHub did not accept the request (it says: "Validation Failed (name already exists on this account)"): correct the details in the request and create the task again',
    );
  });

  it('422 without a message per error names the field and the code', async () => {
    answer = {
      status: 422,
      body: { message: 'Validation Failed', errors: [{ resource: 'Issue', field: 'title', code: 'missing_field' }] },
    };
    const e = await failure(ctx('github', 'create_issue', { owner: 'acme', repo: 'webapp', title: '' }), req({ method: 'POST' }));
    expect(e.message).toBe('GitHub rejected the request (HTTP 422): Validation Failed (title: missing field)');
    expect(e.suggestion).toMatch(/^GitHub did not accept the request for the repository acme\/webapp \(it says/);
  });

  it('404 without anything named in the input still says what to check', async () => {
    answer = { status: 404, body: { message: 'Not Found' } };
    const e = await failure(ctx('github', 'search_repositories', { query: 'tes' }), req({ method: 'GET' }));
    expect(e).toMatchObject({ code: 'step_failed', recoverable: false, message: 'GitHub: not found (Not Found)' });
    expect(e.suggestion).toBe('Check the names in the request, and that the connected GitHub account can see what they name');
  });

  it('Google 403 requiredAccessLevel is no scope problem: rejected with Google’s words, not "re-authorize"', async () => {
    answer = {
      status: 403,
      body: {
        error: {
          errors: [{ domain: 'calendar', reason: 'requiredAccessLevel', message: 'You need to have writer access to this calendar.' }],
          code: 403,
          message: 'You need to have writer access to this calendar.',
        },
      },
    };
    const e = await failure(
      ctx('google_calendar', 'create_event', { calendar_id: 'team@acme.com', summary: 'x', start: '2030-01-01T10:00:00Z' }),
      req({ service: 'google_calendar', method: 'POST', classify: classifyGoogle }),
    );
    expect(e).toMatchObject({ code: 'step_failed', recoverable: false });
    expect(e.suggestion).toBe(
      'Google Calendar did not accept the request for the calendar id "team@acme.com" (it says: "You need to have writer access to this calendar."): correct the details in the request and create the task again',
    );
  });

  it('Google 403 for missing scopes stays permission_denied, suggesting to reconnect granting them', async () => {
    answer = {
      status: 403,
      body: {
        error: {
          code: 403,
          message: 'Request had insufficient authentication scopes.',
          status: 'PERMISSION_DENIED',
          details: [{ reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT' }],
        },
      },
    };
    const e = await failure(
      ctx('gmail', 'send_email', { to: ['a@example.com'], subject: 's', body: 'b' }),
      req({ service: 'gmail', scopes: ['https://www.googleapis.com/auth/gmail.send'], classify: classifyGoogle }),
    );
    expect(e).toMatchObject({ code: 'permission_denied', recoverable: true });
    expect(e.suggestion).toBe(
      'Reconnect Gmail for the user (re-authorize it) granting https://www.googleapis.com/auth/gmail.send, then retry the task',
    );
  });
});
