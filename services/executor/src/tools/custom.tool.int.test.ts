import type { StepRun } from '@tes/contracts';
import { runStep } from '../domain/run-step.use-case.js';
import { startFakeProvider, type FakeProvider } from '../test-support/fake-provider.js';
import { startFakeVault, type FakeVault } from '../test-support/fake-vault.js';
import { startHarness, type Harness } from '../test-support/harness.js';
import type { CustomAction } from './custom.tool.js';

/**
 * Custom tools' actions: the definition travels with the step; live keys call the account's
 * API over real HTTP (a fake "Acme CRM" that checks the bearer token), test keys never do.
 */
describe('custom tool actions', () => {
  let h: Harness;
  let vault: FakeVault;
  let crm: FakeProvider;

  beforeAll(async () => {
    h = await startHarness();
    vault = await startFakeVault(h.broker);
    crm = await startFakeProvider({
      fault: (f) =>
        f.kind === 'unauthorized'
          ? { status: 401, body: { error: 'invalid_token' } }
          : f.kind === 'unavailable'
            ? { status: f.status ?? 503, body: { error: 'down' } }
            : { status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '0' } },
      route: (r) =>
        r.method === 'POST'
          ? { status: 201, body: { id: 'c_1', ...(r.body as object) } }
          : r.method === 'DELETE'
            ? { status: 204, body: undefined }
            : { status: 200, body: [{ id: 'c_1', name: 'Ada' }] },
    });
  });
  afterAll(async () => {
    await crm?.close();
    await h?.close();
  });
  beforeEach(() => {
    crm.requests.length = 0;
    vault.requests.length = 0;
  });

  const action = (over: Partial<CustomAction> = {}): CustomAction => ({
    base_url: `${crm.url}/api/`,
    method: 'POST',
    path: '/accounts/{account}/contacts',
    input_schema: {
      type: 'object',
      properties: { account: { type: 'string' }, name: { type: 'string' }, vip: { type: 'boolean', default: false } },
      required: ['account', 'name'],
    },
    service: 'acme_crm',
    scopes: ['contacts.write'],
    ...over,
  });
  const step = (custom: CustomAction, input: Record<string, unknown>, environment: StepRun['environment'] = 'live') =>
    h.step({ tool: 'acme_crm', action: 'create_contact', input, custom, environment });
  // The fake API is plain http on loopback: the development setting, as a local stack has it.
  const allowLoopback = { http: { allowHosts: ['127.0.0.1'], allowPrivate: true, maxBytes: 1_048_576, timeoutMs: 5000 } };

  it('live: fills the path, sends the rest as JSON with the user token from the vault and an Idempotency-Key', async () => {
    const s = step(action(), { account: 'north/east', name: 'Ada' });
    const result = await runStep(s, h.deps(allowLoopback));
    expect(result).toMatchObject({ outcome: 'complete', output: { id: 'c_1', name: 'Ada', vip: false } });
    expect(crm.requests).toHaveLength(1);
    expect(crm.requests[0]).toMatchObject({
      method: 'POST',
      path: '/api/accounts/north%2Feast/contacts',
      token: 'tok-valid',
      body: { name: 'Ada', vip: false },
    });
    expect(crm.requests[0]?.headers['idempotency-key']).toBe(s.idempotency_key);
    expect(vault.requests[0]).toMatchObject({ service: 'acme_crm', scopes: ['contacts.write'], user_id: 'user_1' });
  });

  it('live GET: the input goes in the query string; a JSON array answer comes back under data', async () => {
    const custom = action({
      method: 'GET',
      path: '/contacts',
      input_schema: { type: 'object', properties: { limit: { type: 'integer' } } },
    });
    const result = await runStep(step(custom, { limit: 2 }), h.deps(allowLoopback));
    expect(result).toMatchObject({ outcome: 'complete', output: { data: [{ id: 'c_1', name: 'Ada' }], status: 200 } });
    expect(crm.requests[0]?.query.get('limit')).toBe('2');
    expect(crm.requests[0]?.headers['idempotency-key']).toBeUndefined();
  });

  it('maps the API faults like a built-in provider: 5xx retried, then service_unavailable', async () => {
    crm.fail({ kind: 'unavailable', status: 502 }, 3);
    const result = await runStep(step(action(), { account: 'a', name: 'Ada' }), h.deps(allowLoopback));
    expect(result.error).toMatchObject({ code: 'service_unavailable', tool: 'acme_crm', recoverable: true });
    expect(result.error?.message).toContain('HTTP 502 after 3 attempts');
    expect(crm.requests).toHaveLength(3);
  });

  it('pauses for consent when the vault has no connection for the custom service', async () => {
    vault.answer = () => ({ status: 'authorization_required', auth_url: 'https://crm.example/authorize?x', message: 'Connect Acme CRM' });
    try {
      const result = await runStep(step(action(), { account: 'a', name: 'Ada' }), h.deps(allowLoopback));
      expect(result).toMatchObject({
        outcome: 'needs_authorization',
        authorization: { service: 'acme_crm', auth_url: 'https://crm.example/authorize?x' },
      });
      expect(crm.requests).toHaveLength(0);
    } finally {
      vault.answer = () => ({ status: 'ok', access_token: 'tok-valid' });
    }
  });

  it('refuses an API on a private address unless allow-listed (SSRF guard)', async () => {
    const result = await runStep(step(action(), { account: 'a', name: 'Ada' }), h.deps());
    expect(result.error).toMatchObject({ code: 'step_failed' });
    expect(result.error?.message).toMatch(/destination not allowed \(127\.0\.0\.1 is a loopback address\)/);
    expect(crm.requests).toHaveLength(0);
  });

  it('wants https for a live call (it carries the user token), even to an allow-listed host', async () => {
    const listedOnly = { http: { allowHosts: ['127.0.0.1'], maxBytes: 1_048_576, timeoutMs: 5000 } };
    const result = await runStep(step(action(), { account: 'a', name: 'Ada' }), h.deps(listedOnly));
    expect(result.error?.message).toMatch(/destination not allowed \(only https is allowed\)/);
    expect(crm.requests).toHaveLength(0);
  });

  it('checks the input against the registered schema, naming the field', async () => {
    const result = await runStep(step(action(), { account: 'a', name: 7 }), h.deps(allowLoopback));
    expect(result.error).toMatchObject({ code: 'step_failed', message: 'invalid input for acme_crm.create_contact: name must be string' });
    expect(crm.requests).toHaveLength(0);
  });

  it('test keys never reach the API: the step answers the request it would make', async () => {
    const result = await runStep(step(action(), { account: 'a', name: 'Ada' }, 'test'), h.deps(allowLoopback));
    expect(result).toMatchObject({
      outcome: 'complete',
      output: { sandbox: true, request: { method: 'POST', url: `${crm.url}/api/accounts/a/contacts`, body: { name: 'Ada', vip: false } } },
    });
    expect(crm.requests).toHaveLength(0);
    expect(vault.requests).toHaveLength(0);
  });

  it('a tool without OAuth sends no token and asks the vault nothing', async () => {
    const custom = action({
      method: 'DELETE',
      path: '/contacts/{id}',
      service: null,
      scopes: [],
      input_schema: { type: 'object', properties: { id: { type: 'string' } } },
    });
    const result = await runStep(step(custom, { id: 'c_1' }), h.deps(allowLoopback));
    expect(crm.requests[0]).toMatchObject({ method: 'DELETE', path: '/api/contacts/c_1' });
    expect(crm.requests[0]?.headers.authorization).toBeUndefined();
    expect(vault.requests).toHaveLength(0);
    // The fake answers 401 without a token: a tool without OAuth has nothing to refresh, and says so.
    expect(result.error).toMatchObject({ code: 'step_failed', message: expect.stringContaining('has no OAuth configuration') });
    expect(crm.requests).toHaveLength(1);
  });
});
