import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, admin, startStack, type Stack } from '@tes/testing';
import { httpsClient, type Answer, type Client } from './http.js';

/**
 * Fuzzing the public API with fast-check: FUZZ_RUNS (default 10,200, so that at least 10,000 go out) generated requests —
 * methods, paths (ids, case, slashes, dot segments, percent-encodings valid and not),
 * query strings (repeated and bracketed parameters, junk numbers), Authorization variants
 * (valid test/live keys, revoked, disabled account, malformed), Content-Type and other
 * headers, Idempotency-Key values, bodies (near-valid task bodies, any JSON, broken JSON,
 * non-JSON, too large) — sent over HTTPS with keep-alive, FUZZ_CONCURRENCY (16) at a time,
 * against the gateway of a started stack.
 *
 * Every answer must come within the per-request timeout; no 5xx except 503
 * temporarily_unavailable (the back end answering late); every non-2xx body is exactly
 * {"error":{"code","message"}}; every answer has an X-Request-Id; and at the end the gateway
 * is the same process, still ready. The seed (FUZZ_SEED) and the failing requests are
 * printed and written to .run/fuzz-report.json so a failure can be replayed.
 *
 * Prompts come from a fixed set or an alphabet without ':' '/' '.', so no generated task
 * can make the executor reach outside this machine (live keys call real providers).
 */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? '') || 10_200;
const CONCURRENCY = Number(process.env['FUZZ_CONCURRENCY'] ?? '') || 16;
const SEED = Number(process.env['FUZZ_SEED'] ?? '') || Date.now() % 2_147_483_647;
const TIMEOUT_MS = 20_000;

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

describe('fuzz: generated requests against the gateway', () => {
  let stack: Stack;
  let client: Client;
  const keys: Record<string, string> = {};
  const taskIds: string[] = [];

  beforeAll(async () => {
    stack = await startStack();
    const acct = await admin(['accounts', 'create', '--name', 'fuzz', '--plan', 'enterprise'], stack.adminEnv);
    await admin(['accounts', 'set-limits', acct.account_id, '--rpm', '100000000', '--concurrency', '1000000'], stack.adminEnv);
    keys['test'] = acct.api_keys.test;
    keys['live'] = acct.api_keys.live;
    const revoked = await admin(['keys', 'create', '--account', acct.account_id, '--env', 'test'], stack.adminEnv);
    await admin(['keys', 'revoke', '--key', revoked.key_id], stack.adminEnv);
    keys['revoked'] = revoked.api_key;
    const disabled = await admin(['accounts', 'create', '--name', 'fuzz-disabled', '--plan', 'enterprise'], stack.adminEnv);
    await admin(['accounts', 'disable', disabled.account_id], stack.adminEnv);
    keys['disabled'] = disabled.api_keys.test;
    client = httpsClient({ maxSockets: CONCURRENCY });
    for (const [key, prompt] of [
      [keys['test'], 'Echo "fuzz seed 1"'],
      [keys['test'], 'For each number from 1 to 3, echo it'],
      [keys['live'], 'Echo "fuzz seed live"'],
    ] as const) {
      const r = await client.send('POST', `${stack.baseUrl}/tasks`, {
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt }),
      });
      expect(r.status).toBe(201);
      taskIds.push((r.json as { id: string }).id);
    }
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await stack?.stopAll();
  });

  function requests(): fc.Arbitrary<FuzzRequest> {
    const safeText = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789"\'#-_,;!?é漢🙂\t'), maxLength: 60 });
    const prompt = fc.oneof(
      fc.constantFrom('Echo "fuzz"', 'For each number from 1 to 3, echo it', 'For each number from 1 to 60, echo it', 'Echo ""', ''),
      safeText.map((t) => `Echo "${t}"`),
      safeText,
      fc.constant('x'.repeat(10_001)),
    );
    const anyJson = fc.jsonValue({ maxDepth: 3 });
    const taskBody = fc.record(
      {
        prompt: fc.oneof({ weight: 6, arbitrary: prompt }, { weight: 1, arbitrary: anyJson }),
        metadata: fc.oneof(fc.dictionary(safeText, anyJson, { maxKeys: 4 }), anyJson),
        user_id: fc.oneof(safeText, anyJson),
        mode: fc.oneof(fc.constantFrom('live', 'test', 'TEST', ''), anyJson),
        extra: anyJson,
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      { weight: 8, arbitrary: taskBody.map((b) => JSON.stringify(b)) },
      { weight: 2, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          '',
          '{',
          '{"prompt":',
          'null',
          '[]',
          '"str"',
          '{"prompt":"a"}garbage',
          '\u0000',
          '{"__proto__":{"x":1},"prompt":"Echo \\"p\\""}',
          '{"constructor":{"prototype":{"x":1}}}',
        ),
      },
      { weight: 1, arbitrary: safeText },
      {
        weight: 1,
        arbitrary: fc.constantFrom(300_000, 262_145).map((n) => JSON.stringify({ prompt: 'Echo "big"', metadata: { pad: 'x'.repeat(n) } })),
      },
    );
    const id = fc.oneof(
      fc.constantFrom(...taskIds),
      fc.constantFrom('task_', 'task_00000000000000000000000000', 'TASK_X', '..', '.', '%2e%2e', 'task_%00', 'task_%zz', 'task_%E0%A4%A'),
      fc.stringMatching(/^[A-Za-z0-9_\-.~%]{0,40}$/),
    );
    const service = fc.constantFrom('github', 'slack', 'gmail', 'google_calendar', 'notion', 'nope', '%FF', '');
    const pathArb = fc.oneof(
      { weight: 5, arbitrary: fc.constant('/v1/tasks') },
      { weight: 4, arbitrary: id.map((i) => `/v1/tasks/${i}`) },
      { weight: 2, arbitrary: id.map((i) => `/v1/tasks/${i}/cancel`) },
      { weight: 2, arbitrary: id.map((i) => `/v1/tasks/${i}/trace`) },
      { weight: 1, arbitrary: id.map((u) => `/v1/users/${u}/connections`) },
      { weight: 1, arbitrary: fc.tuple(id, service).map(([u, s]) => `/v1/users/${u}/connections/${s}`) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '/v1/openapi.json',
          '/',
          '/v1',
          '/v1/',
          '/V1/Tasks',
          '/v1/tasks/',
          '//v1//tasks',
          '/v1/./tasks',
          '/v1/../v1/tasks',
          '/v2/tasks',
          '/healthz',
          '/metrics',
          '/v1/tasks%2F',
          '/%',
          '/v1/tasks/%',
          '*',
        ),
      },
      { weight: 1, arbitrary: fc.stringMatching(/^\/[A-Za-z0-9_\-.~%/!$&'()*+,;=:@]{0,80}$/) },
      { weight: 1, arbitrary: fc.constant(`/v1/tasks/${'a'.repeat(4000)}`) },
    );
    const qvalue = fc.oneof(
      fc.constantFrom('0', '-1', '1', '100', '101', '1e3', '0x10', 'NaN', '', '%', '%zz', '9'.repeat(30), 'complete', 'running', 'RUNNING'),
      fc.stringMatching(/^[A-Za-z0-9%._~-]{0,12}$/),
    );
    const qname = fc.constantFrom('limit', 'offset', 'status', 'status[]', 'limit[a]', 'cursor', '__proto__', 'constructor', 'x');
    const query = fc.oneof(
      { weight: 3, arbitrary: fc.constant('') },
      {
        weight: 4,
        arbitrary: fc
          .array(fc.tuple(qname, qvalue), { maxLength: 4 })
          .map((ps) => (ps.length ? `?${ps.map(([k, v]) => `${k}=${v}`).join('&')}` : '')),
      },
      { weight: 1, arbitrary: fc.constantFrom('?', '?&&', '?=', '?limit', '?limit=1&limit=2', `?x=${'y'.repeat(3000)}`) },
    );
    const auth = fc.oneof(
      { weight: 8, arbitrary: fc.constant('Bearer {test}') },
      { weight: 2, arbitrary: fc.constant('Bearer {live}') },
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          '',
          'Bearer',
          'Bearer ',
          'bearer {test}',
          'BEARER {test}',
          'Bearer  {test}',
          'Bearer {test} ',
          'Bearer {test}x',
          'Bearer {revoked}',
          'Bearer {disabled}',
          'Basic dXNlcjpwYXNz',
          'Token {test}',
          'Bearer pk_test_',
          'Bearer pk_live_0000000000000000000000000000000000000000',
          `Bearer ${'k'.repeat(5000)}`,
          'Bearer é漢',
        ),
      },
      { weight: 1, arbitrary: fc.stringMatching(/^[\x20-\x7e]{0,60}$/) },
      { weight: 2, arbitrary: fc.constant(undefined) },
    );
    const contentType = fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          'application/json; charset=utf-8',
          'application/json; charset=latin1',
          'application/json; charset=utf-16',
          'APPLICATION/JSON',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=xyz',
          'application/merge-patch+json',
          'application/*',
          ';;',
          'application/json; charset="',
        ),
      },
      { weight: 1, arbitrary: fc.stringMatching(/^[\x20-\x7e]{0,40}$/) },
      { weight: 2, arbitrary: fc.constant(undefined) },
    );
    const idempotencyKey = fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      { weight: 3, arbitrary: fc.stringMatching(/^[\x20-\x7e]{1,40}$/) },
      { weight: 1, arbitrary: fc.constantFrom('', ' ', 'k'.repeat(256), 'é', 'same-key', 'same-key-2') },
    );
    const extraHeaders = fc.dictionary(
      fc.constantFrom(
        'x-request-id',
        'accept',
        'accept-encoding',
        'x-forwarded-proto',
        'x-forwarded-for',
        'origin',
        'x-http-method-override',
        'content-encoding',
        'x-custom',
      ),
      fc.oneof(
        fc.stringMatching(/^[\x20-\x7e]{0,40}$/),
        fc.constantFrom('gzip', 'https', '*/*', 'text/html', 'DELETE', 'identity', 'x'.repeat(2000)),
      ),
      { maxKeys: 3 },
    );
    // Rare on purpose: node answers any Expect but 100-continue itself, before the app.
    const expectHeader = fc.oneof(
      { weight: 48, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constant('100-continue') },
      { weight: 1, arbitrary: fc.constantFrom('gzip', '', '200-ok', 'x'.repeat(30)) },
    );
    const method = fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom('GET', 'POST') },
      { weight: 3, arbitrary: fc.constantFrom('PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS') },
      { weight: 1, arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'PURGE', 'SEARCH', 'LINK', 'REPORT') },
    );
    return fc
      .record({ method, path: pathArb, query, auth, contentType, idempotencyKey, extraHeaders, expectHeader, body, withBody: fc.boolean() })
      .map((r) => {
        const headers: Record<string, string> = { ...r.extraHeaders };
        if (r.auth !== undefined) headers['authorization'] = r.auth.replace(/\{(\w+)\}/g, (_, k: string) => keys[k] ?? k);
        if (r.contentType !== undefined) headers['content-type'] = r.contentType;
        if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
        if (r.expectHeader !== undefined) headers['expect'] = r.expectHeader;
        const sendBody =
          r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH' || (r.withBody && r.method !== 'HEAD' && r.method !== 'GET');
        const req: FuzzRequest = { method: r.method, path: `${r.path}${r.query}`, headers };
        if (sendBody) {
          req.body = r.body;
          headers['content-length'] = String(Buffer.byteLength(r.body));
        }
        return req;
      });
  }

  /** The likeliest cause of a failure, to group them. */
  function trigger(req: FuzzRequest): string {
    const expect = req.headers['expect'];
    if (expect !== undefined && expect.toLowerCase() !== '100-continue') return 'Expect header other than 100-continue';
    const pathOnly = req.path.split('?')[0]!;
    try {
      for (const seg of pathOnly.split('/')) decodeURIComponent(seg);
    } catch {
      return 'malformed %-escape in a path segment';
    }
    return `${req.method} ${pathOnly.replace(/^\/v1\/(tasks|users)\/[^/]*/, '/v1/$1/:id').slice(0, 60)}`;
  }

  /** What is wrong with one answer (empty when it is right). */
  function judge(req: FuzzRequest, a: Answer): string[] {
    const bad: string[] = [];
    if (a.status <= 0) return [`no answer: ${a.error}`];
    // 503 temporarily_unavailable is the back end answering late (a HEAD answer has no body to show the code).
    const late =
      a.status === 503 &&
      (req.method === 'HEAD' || (a.json as { error?: { code?: string } } | undefined)?.error?.code === 'temporarily_unavailable');
    if (a.status >= 500 && !late) bad.push(`status ${a.status}`);
    if (!a.headers['x-request-id']) bad.push('no X-Request-Id');
    if (a.status >= 300 && req.method !== 'HEAD') {
      const j = a.json as Record<string, unknown> | undefined;
      const e = j?.['error'] as Record<string, unknown> | undefined;
      const ok =
        j !== undefined &&
        typeof j === 'object' &&
        !Array.isArray(j) &&
        Object.keys(j).join() === 'error' &&
        e !== undefined &&
        typeof e === 'object' &&
        // code and message always; a refusal of the planner adds its suggestion (and the missing inputs).
        Object.keys(e).every((k) => ['code', 'message', 'suggestion', 'missing'].includes(k)) &&
        typeof e['code'] === 'string' &&
        typeof e['message'] === 'string' &&
        (e['suggestion'] === undefined || typeof e['suggestion'] === 'string') &&
        (e['missing'] === undefined || (Array.isArray(e['missing']) && e['missing'].every((m) => typeof m === 'string')));
      if (!ok) bad.push(`not the error envelope: ${a.text.slice(0, 200)}`);
    }
    return bad;
  }

  it(
    `answers ${RUNS} generated requests without a 5xx, a hang, or a body outside the envelope, in the same process`,
    async () => {
      const pidBefore = stack.procs.get('gateway')!.child.pid;
      const samples = fc.sample(requests(), { numRuns: RUNS, seed: SEED });
      const origin = new URL(stack.baseUrl).origin;
      const failures: { req: FuzzRequest; status: number; problems: string[]; body: string }[] = [];
      const statuses: Record<string, number> = {};
      let clientRefused = 0;
      let sent = 0;
      let maxMs = 0;
      const t0 = Date.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < samples.length) {
            const req = samples[next++]!;
            const a = await client.send(req.method, `${origin}/`, {
              path: req.path,
              headers: req.headers,
              ...(req.body !== undefined ? { body: req.body } : {}),
              timeoutMs: TIMEOUT_MS,
            });
            if (a.status === -1) {
              clientRefused++; // node refused to send it (invalid header value): not a request
              continue;
            }
            sent++;
            maxMs = Math.max(maxMs, a.ms);
            const code = (a.json as { error?: { code?: string } } | undefined)?.error?.code;
            statuses[`${a.status}${code ? ` ${code}` : ''}`] = (statuses[`${a.status}${code ? ` ${code}` : ''}`] ?? 0) + 1;
            const problems = judge(req, a);
            if (problems.length)
              failures.push({
                req: { ...req, ...(req.body !== undefined ? { body: req.body.slice(0, 300) } : {}) },
                status: a.status,
                problems,
                body: a.text.slice(0, 300),
              });
          }
        }),
      );
      const elapsedMs = Date.now() - t0;
      const gw = stack.procs.get('gateway')!;
      const ready = await fetch(`http://127.0.0.1:${stack.opsPorts.gateway}/readyz`)
        .then((r) => r.status)
        .catch(() => 0);
      // Failures grouped by what went wrong and the route's shape, with up to 3 examples each.
      const kinds: Record<string, { count: number; examples: typeof failures }> = {};
      for (const f of failures) {
        const k = `${f.status} ${f.problems.map((p) => p.replace(/:.*/, '')).join(' + ')} [${trigger(f.req)}]`;
        const kind = (kinds[k] ??= { count: 0, examples: [] });
        kind.count++;
        if (kind.examples.length < 3) kind.examples.push(f);
      }
      const report = {
        seed: SEED,
        runs: RUNS,
        sent,
        clientRefused,
        concurrency: CONCURRENCY,
        elapsed_ms: elapsedMs,
        max_latency_ms: maxMs,
        statuses,
        failure_count: failures.length,
        failure_kinds: kinds,
      };
      mkdirSync(path.join(REPO_ROOT, '.run'), { recursive: true });
      writeFileSync(path.join(REPO_ROOT, '.run', 'fuzz-report.json'), `${JSON.stringify(report, null, 2)}\n`);
      process.stdout.write(
        `fuzz: seed ${SEED}, ${sent} requests sent (${clientRefused} refused by the client) in ${elapsedMs} ms, max ${maxMs} ms, ${failures.length} failure(s); statuses ${JSON.stringify(statuses)}\n`,
      );

      expect(failures.slice(0, 10)).toEqual([]);
      expect(sent).toBeGreaterThanOrEqual(process.env['FUZZ_RUNS'] ? RUNS * 0.98 : 10_000);
      expect(gw.child.pid).toBe(pidBefore);
      expect(gw.child.exitCode).toBeNull();
      expect(gw.child.signalCode).toBeNull();
      expect(ready).toBe(200);
    },
    Math.max(240_000, RUNS * 25),
  );
});
