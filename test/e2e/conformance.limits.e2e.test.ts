import { admin, freePort, request, startService, waitReady, type HttpResult, type ServiceProcess, type Stack } from '@tes/testing';
import { OpenApi, bearer, newAccount, roomInWindow, startApiStack, type Account } from './conformance.support.js';

/**
 * Spec 8.2 rate limits, 8.4 Idempotency-Key and 5.3 revocation, with two gateway
 * replicas (two processes sharing the gateway database) so that "per account across
 * its keys and across replicas" is what is tested. Each rate-limit test uses a fresh
 * account and starts with enough of the current minute left to stay in one window.
 */
describe('public API conformance: rate limits, idempotency, revocation', () => {
  let stack: Stack;
  let api: OpenApi;
  let replica2: ServiceProcess;
  let bases: [string, string];

  const list = async (base: string, key: string) =>
    api.check('GET', '/tasks', await request('GET', `${base}/tasks`, { headers: bearer(key) }));
  const create = async (base: string, key: string, body: unknown, idem?: string) =>
    api.check(
      'POST',
      '/tasks',
      await request('POST', `${base}/tasks`, {
        headers: { ...bearer(key), ...(idem === undefined ? {} : { 'idempotency-key': idem }) },
        body: body as object,
      }),
    );

  beforeAll(async () => {
    stack = await startApiStack();
    api = await OpenApi.fetch(stack);
    const [port, httpPort, opsPort] = [await freePort(), await freePort(), await freePort()];
    replica2 = startService('gateway', {
      ...stack.envOf('gateway'),
      PORT: String(port),
      HTTP_PORT: String(httpPort),
      OPS_PORT: String(opsPort),
    });
    await waitReady(opsPort, replica2);
    bases = [stack.baseUrl, `https://127.0.0.1:${port}/v1`];
  }, 120_000);

  afterAll(async () => {
    await replica2?.stop();
    await stack?.stopAll();
  });

  describe('rate limits (spec 8.2)', () => {
    it('allows a prototyping account 100 requests a minute across its test and live keys and both replicas; the 101st is 429 with Retry-After', async () => {
      const acct = await newAccount(stack);
      await roomInWindow(12);
      const keys = [acct.api_keys.test, acct.api_keys.live];
      const answers: HttpResult[] = [];
      for (let i = 0; i < 100; i++) answers.push(await list(bases[i % 2]!, keys[Math.floor(i / 2) % 2]!));
      const reset = answers[0]!.headers['x-ratelimit-reset'];
      answers.forEach((r, i) => {
        expect([i, r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining'], r.headers['x-ratelimit-reset']]).toEqual([
          i,
          200,
          '100',
          String(99 - i),
          reset,
        ]);
      });
      const refused = await list(bases[0], acct.api_keys.test);
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
      expect([
        refused.headers['x-ratelimit-limit'],
        refused.headers['x-ratelimit-remaining'],
        refused.headers['x-ratelimit-reset'],
      ]).toEqual(['100', '0', reset]);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(Math.abs(Number(reset) - Date.now() / 1000 - retryAfter)).toBeLessThanOrEqual(2);
      // Every key, every replica, every operation: the account is over its limit; a create makes nothing.
      const more = [await list(bases[1], acct.api_keys.live), await create(bases[1], acct.api_keys.test, { prompt: 'echo too many' })];
      for (const r of more) expect([r.status, r.json.error.code]).toEqual([429, 'rate_limit_exceeded']);
      // Other accounts are not affected.
      const other = await newAccount(stack);
      expect((await list(bases[0], other.api_keys.test)).status).toBe(200);
    });

    it('never admits more than the limit under concurrent requests on both replicas (an enterprise limit set by the operator)', async () => {
      const acct = await newAccount(stack, { plan: 'enterprise', rpm: 40 });
      await roomInWindow(8);
      const answers = await Promise.all(
        Array.from({ length: 70 }, (_, i) => list(bases[i % 2]!, i % 3 === 0 ? acct.api_keys.live : acct.api_keys.test)),
      );
      const ok = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status === 429);
      expect(ok.length + refused.length).toBe(70);
      expect(ok).toHaveLength(40);
      expect(new Set(ok.map((r) => r.headers['x-ratelimit-remaining']))).toEqual(new Set(Array.from({ length: 40 }, (_, i) => String(i))));
      for (const r of answers) expect(r.headers['x-ratelimit-limit']).toBe('40');
      for (const r of refused) expect(r.headers['retry-after']).toMatch(/^\d+$/);
    });

    it("applies an operator's new limit on the next request on both replicas, though each has the account cached", async () => {
      const acct = await newAccount(stack, { plan: 'enterprise', rpm: 500 });
      await roomInWindow(8);
      // Both replicas read the key and account now, and keep them (AUTH_CACHE_MS, 10 s by default).
      for (const base of bases) expect((await list(base, acct.api_keys.test)).headers['x-ratelimit-limit']).toBe('500');
      await admin(['accounts', 'set-limits', acct.account_id, '--rpm', '3'], stack.adminEnv);
      // Two requests counted already: the third is the last one the new limit admits, the fourth is refused.
      const third = await list(bases[1], acct.api_keys.live);
      expect([third.status, third.headers['x-ratelimit-limit'], third.headers['x-ratelimit-remaining']]).toEqual([200, '3', '0']);
      const fourth = await list(bases[0], acct.api_keys.test);
      expect([fourth.status, fourth.headers['x-ratelimit-limit'], fourth.json.error?.code]).toEqual([429, '3', 'rate_limit_exceeded']);
    });

    it('advertises the plan limit: production 1,000 requests per minute', async () => {
      const acct = await newAccount(stack, { plan: 'production' });
      const r = await list(bases[0], acct.api_keys.live);
      expect([r.status, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']]).toEqual([200, '1000', '999']);
    });
  });

  describe('Idempotency-Key (spec 8.4)', () => {
    let acct: Account;
    beforeAll(async () => {
      acct = await newAccount(stack, { rpm: 100_000 });
    });
    const count = async (userId: string, key = acct.api_keys.test) =>
      (await request('GET', `${bases[0]}/tasks?user_id=${userId}&limit=100`, { headers: bearer(key) })).json.data.length as number;

    it('answers a repeat with the same key and body with the original status and body, and creates no task', async () => {
      const body = { prompt: 'Echo "once"', user_id: 'user_idem1', metadata: { a: 1, b: [1, 2] } };
      const first = await create(bases[0], acct.api_keys.test, body, 'order-1');
      expect(first.status).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await create(bases[1], acct.api_keys.test, body, 'order-1');
      expect(again.status).toBe(201);
      expect(again.json).toEqual(first.json);
      expect(again.headers['idempotent-replayed']).toBe('true');
      // Same JSON value written differently (key order, spacing) is the same body.
      const reordered = await request('POST', `${bases[0]}/tasks`, {
        headers: { ...bearer(acct.api_keys.test), 'idempotency-key': 'order-1' },
        body: '{ "metadata": {"b": [1,2], "a": 1}, "user_id": "user_idem1", "prompt": "Echo \\"once\\"" }',
      });
      expect([reordered.status, reordered.json]).toEqual([201, first.json]);
      expect(await count('user_idem1')).toBe(1);
    });

    it('answers 409 idempotency_key_reused for the same key with another body', async () => {
      await create(bases[0], acct.api_keys.test, { prompt: 'Echo "one"', user_id: 'user_idem2' }, 'reuse-me');
      const other = await create(bases[1], acct.api_keys.test, { prompt: 'Echo "two"', user_id: 'user_idem2' }, 'reuse-me');
      expect([other.status, other.json.error.code]).toEqual([409, 'idempotency_key_reused']);
      expect(await count('user_idem2')).toBe(1);
    });

    it('creates exactly one task for 20 concurrent duplicates on two replicas; every answer is the original 201 or 409 in progress', async () => {
      const body = { prompt: 'Echo "stampede"', user_id: 'user_idem3' };
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => create(bases[i % 2]!, acct.api_keys.test, body, 'stampede-1')),
      );
      const created = answers.filter((r) => r.status === 201);
      const busy = answers.filter((r) => r.status === 409);
      expect(created.length + busy.length).toBe(20);
      expect(created.length).toBeGreaterThanOrEqual(1);
      for (const r of created) expect(r.json).toEqual(created[0]!.json);
      for (const r of busy) expect(r.json.error.code).toBe('idempotency_key_in_progress');
      expect(await count('user_idem3')).toBe(1);
      const later = await create(bases[0], acct.api_keys.test, body, 'stampede-1');
      expect([later.status, later.json]).toEqual([201, created[0]!.json]);
    });

    it('keeps keys per environment: the same key with the live key is another request', async () => {
      const body = { prompt: 'Echo "per env"', user_id: 'user_idem4' };
      const t = await create(bases[0], acct.api_keys.test, body, 'env-key');
      const l = await create(bases[0], acct.api_keys.live, body, 'env-key');
      expect([t.status, l.status]).toEqual([201, 201]);
      expect(l.json.id).not.toBe(t.json.id);
    });

    it('replays a refusal made after the key was taken (422 no_matching_tool) the same way', async () => {
      const first = await create(bases[0], acct.api_keys.test, { prompt: 'qwzx vbnmop plokij' }, 'refused-1');
      expect([first.status, first.json.error.code]).toEqual([422, 'no_matching_tool']);
      const again = await create(bases[1], acct.api_keys.test, { prompt: 'qwzx vbnmop plokij' }, 'refused-1');
      expect([again.status, again.json]).toEqual([422, first.json]);
    });

    it.each([
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['non-ASCII', 'clé'],
      ['a control character', 'a\tb'],
    ])('answers 400 invalid_request for a %s key', async (_what, key) => {
      const r = await create(bases[0], acct.api_keys.test, { prompt: 'Echo "bad key"', user_id: 'user_idem5' }, key);
      expect([r.status, r.json.error.code]).toEqual([400, 'invalid_request']);
      expect(r.json.error.message).toMatch(/Idempotency-Key/);
    });

    it('accepts a 255-character printable key', async () => {
      const r = await create(bases[0], acct.api_keys.test, { prompt: 'Echo "long key"', user_id: 'user_idem5' }, `${'k'.repeat(250)} ~!@#`);
      expect(r.status).toBe(201);
      expect(await count('user_idem5')).toBe(1);
    });
  });

  describe('revocation and disabled accounts (spec 5.3, brief 403)', () => {
    it('refuses a revoked key on the very next request, on every replica; the other keys keep working', async () => {
      const acct = await newAccount(stack, { rpm: 100_000 });
      const extra = (await admin(['keys', 'create', '--account', acct.account_id, '--env', 'test'], stack.adminEnv)) as {
        key_id: string;
        api_key: string;
      };
      expect((await list(bases[0], extra.api_key)).status).toBe(200);
      expect((await list(bases[1], extra.api_key)).status).toBe(200);
      const revoked = (await admin(['keys', 'revoke', '--key', extra.key_id], stack.adminEnv)) as { status: string };
      expect(revoked.status).toBe('revoked');
      for (const base of bases) {
        const r = await list(base, extra.api_key);
        expect([r.status, r.json]).toEqual([401, { error: { code: 'invalid_api_key', message: expect.any(String) } }]);
      }
      expect((await list(bases[1], acct.api_keys.test)).status).toBe(200);
    });

    it('keys list (operator CLI) shows each key of the account by prefix and last four only, never the key', async () => {
      const acct = await newAccount(stack);
      await newAccount(stack); // another account, whose keys must not be listed
      const extra = (await admin(['keys', 'create', '--account', acct.account_id, '--env', 'live'], stack.adminEnv)) as {
        key_id: string;
        api_key: string;
      };
      await admin(['keys', 'revoke', '--key', extra.key_id], stack.adminEnv);
      const keys = (await admin(['keys', 'list', '--account', acct.account_id], stack.adminEnv)) as Record<string, unknown>[];

      // The two made with the account (same millisecond, either order), then the extra one, now revoked.
      // None of the other account's.
      const row = (k: Record<string, unknown>) => [k['environment'], k['prefix'], k['last4'], k['status']].join(' ');
      expect(keys.slice(0, 2).map(row).sort()).toEqual(
        [`test pk_test_ ${acct.api_keys.test.slice(-4)} active`, `live pk_live_ ${acct.api_keys.live.slice(-4)} active`].sort(),
      );
      expect(keys.slice(2).map(row)).toEqual([`live pk_live_ ${extra.api_key.slice(-4)} revoked`]);
      expect(keys[2]?.['key_id']).toBe(extra.key_id);
      for (const k of keys) {
        expect(Object.keys(k).sort()).toEqual(
          [
            'account_id',
            'created_at',
            'environment',
            'expires_at',
            'key_id',
            'last4',
            'last_used_at',
            'name',
            'prefix',
            'revoked_at',
            'status',
          ].sort(),
        );
        expect(k['account_id']).toBe(acct.account_id);
        expect(k['key_id']).toMatch(/^key_/);
      }
      const printed = JSON.stringify(keys);
      for (const full of [acct.api_keys.test, acct.api_keys.live, extra.api_key]) {
        expect(printed).not.toContain(full);
        // Not even the secret part of it without its prefix.
        expect(printed).not.toContain(full.replace(/^pk_(test|live)_/, '').slice(0, -4));
      }
    });

    it('answers 403 account_disabled for every key of a disabled account, and serves it again once enabled', async () => {
      const acct = await newAccount(stack, { rpm: 100_000 });
      expect((await list(bases[0], acct.api_keys.test)).status).toBe(200);
      await admin(['accounts', 'disable', acct.account_id], stack.adminEnv);
      for (const [base, key] of [
        [bases[0], acct.api_keys.test],
        [bases[1], acct.api_keys.live],
      ] as const) {
        const r = await list(base, key);
        expect([r.status, r.json]).toEqual([403, { error: { code: 'account_disabled', message: expect.any(String) } }]);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
        const c = await create(base, key, { prompt: 'echo disabled' });
        expect(c.status).toBe(403);
      }
      await admin(['accounts', 'enable', acct.account_id], stack.adminEnv);
      expect((await list(bases[1], acct.api_keys.test)).status).toBe(200);
    });
  });
});
