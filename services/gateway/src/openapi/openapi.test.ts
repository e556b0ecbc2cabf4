import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { API_ERROR_STATUS } from '@tes/errors';
import { compile, createTaskBodySchema, listTasksQuerySchema, taskSchema } from '@tes/contracts';
import { COMPONENT_SCHEMAS, buildOpenApiDocument, toOpenApiSchema } from './openapi.js';

type Any = any;
const doc = buildOpenApiDocument() as Any;

/** Replaces every {$ref: '#/components/schemas/X'} by the component, recursively. */
function deref(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(deref);
  const o = v as Record<string, unknown>;
  if (typeof o['$ref'] === 'string') {
    const name = o['$ref'].replace('#/components/schemas/', '');
    return deref(doc.components.schemas[name]);
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, deref(x)]));
}

/** The contract schema as plain JSON without $id (what the document must carry). */
function plain(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(plain);
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => k !== '$id')
      .map(([k, x]) => [k, plain(x)]),
  );
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (checked against the official schema)', () => {
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      let input = '';
      for await (const c of process.stdin) input += c;
      const v = new Validator();
      const res = await v.validate(JSON.parse(input));
      process.stdout.write(JSON.stringify({ valid: res.valid, version: v.version, errors: res.errors ?? null }));
    `;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: path.resolve(__dirname, '..', '..'),
      input: JSON.stringify(doc),
      encoding: 'utf8',
    });
    expect(out.stderr).toBe('');
    const res = JSON.parse(out.stdout) as { valid: boolean; version: string; errors: unknown };
    expect(res.errors).toBeNull();
    expect(res).toMatchObject({ valid: true, version: '3.1' });
  });

  it('carries every contract schema unchanged once its references are resolved', () => {
    for (const [name, schema] of Object.entries(COMPONENT_SCHEMAS)) {
      expect([name, deref(doc.components.schemas[name])]).toEqual([name, plain(schema)]);
    }
  });

  it('emits nested contract schemas once, as references', () => {
    expect(doc.components.schemas.Task.properties.error).toEqual({ $ref: '#/components/schemas/TaskError' });
    expect(doc.components.schemas.TaskList.properties.data.items).toEqual({ $ref: '#/components/schemas/TaskListItem' });
    expect(doc.components.schemas.TaskTrace.properties.steps.items).toEqual({ $ref: '#/components/schemas/TraceStep' });
    expect(doc.components.schemas.ConnectionList.properties.data.items).toEqual({ $ref: '#/components/schemas/Connection' });
    expect(JSON.stringify(doc)).not.toContain('"$id"');
  });

  it('documents every endpoint with its success answer', () => {
    const ops = Object.entries(doc.paths as Record<string, Record<string, Any>>).flatMap(([p, item]) =>
      Object.entries(item).map(([m, op]) => `${m.toUpperCase()} ${p} ${Object.keys(op.responses).find((s) => s.startsWith('2'))}`),
    );
    expect(ops.sort()).toEqual(
      [
        'POST /tasks 201',
        'GET /tasks 200',
        'GET /tasks/{task_id} 200',
        'POST /tasks/{task_id}/cancel 200',
        'GET /tasks/{task_id}/trace 200',
        'GET /users/{user_id}/connections 200',
        'DELETE /users/{user_id}/connections/{service} 204',
        'POST /users/{user_id}/settings_link 201',
        'POST /tools 201',
        'GET /tools 200',
        'GET /tools/{name} 200',
        'DELETE /tools/{name} 204',
        'GET /openapi.json 200',
      ].sort(),
    );
  });

  it('maps each error code of an operation to the status of the one taxonomy, in the envelope', () => {
    const seen = new Set<string>();
    for (const item of Object.values(doc.paths as Record<string, Record<string, Any>>)) {
      for (const op of Object.values(item)) {
        for (const [status, r] of Object.entries(op.responses as Record<string, Any>)) {
          if (Number(status) < 400) continue;
          const [envelope, narrowed] = r.content['application/json'].schema.allOf;
          expect(envelope).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
          for (const code of narrowed.properties.error.properties.code.enum as (keyof typeof API_ERROR_STATUS)[]) {
            expect([code, API_ERROR_STATUS[code]]).toEqual([code, Number(status)]);
            seen.add(code);
          }
        }
      }
    }
    // Routing answers (405 method_not_allowed) and the plain-HTTP listener's 403 are not per operation;
    // 404 not_found is listed where it means an unknown tool.
    const unlisted = Object.keys(API_ERROR_STATUS).filter((c) => !seen.has(c));
    expect(unlisted.sort()).toEqual(['https_required', 'method_not_allowed']);
  });

  it("lists the spec codes of create: 400, 401, 422, 429 and the brief's 409s", () => {
    const r = doc.paths['/tasks'].post.responses;
    const codes = (s: string) => r[s].content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
    expect(codes('400')).toEqual(['invalid_request']);
    expect(codes('401').sort()).toEqual(['invalid_api_key', 'missing_api_key']);
    expect(codes('409').sort()).toEqual(['idempotency_key_in_progress', 'idempotency_key_reused']);
    expect(codes('422').sort()).toEqual(['missing_input', 'no_matching_tool', 'prompt_too_long', 'unsupported_request']);
    expect(codes('429')).toEqual(['rate_limit_exceeded']);
    expect(r['429'].headers['Retry-After']).toBeDefined();
    expect(r['201'].headers['X-RateLimit-Reset']).toBeDefined();
    expect(r['401'].headers['X-RateLimit-Limit']).toBeUndefined();
  });

  it('takes the list query parameters from the contract schema', () => {
    const params = doc.paths['/tasks'].get.parameters as Any[];
    expect(params.map((p) => p.name)).toEqual(Object.keys(listTasksQuerySchema.properties));
    expect(params.find((p) => p.name === 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
  });

  it('validates the same bodies as the request validator does', () => {
    const check = compile(createTaskBodySchema);
    const fromDoc = compile({ ...doc.components.schemas.CreateTaskBody });
    for (const body of [
      { prompt: 'x' },
      { prompt: 'x', mode: 'test', user_id: null, metadata: { a: 1 } },
      {},
      { prompt: 1 },
      { prompt: 'x', extra: 1 },
      { prompt: 'x', mode: 'dry' },
    ]) {
      expect([body, fromDoc(body)]).toEqual([body, check(body)]);
    }
    expect(toOpenApiSchema(taskSchema, 'Task')).toEqual(doc.components.schemas.Task);
  });
});
