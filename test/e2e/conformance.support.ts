import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { compile } from '@tes/contracts';
import { REPO_ROOT, admin, request, startStack, type HttpResult, type ServiceName, type Stack } from '@tes/testing';

/**
 * Shared by the conformance suites: checks real answers against the OpenAPI
 * document the gateway serves, and a few request helpers.
 */

export const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

export interface Account {
  account_id: string;
  api_keys: { test: string; live: string };
}

/** The parts of an OpenAPI 3.1 document these checks read. */
interface HeaderObject {
  $ref?: string;
  required?: boolean;
  schema?: { type?: string; const?: string };
}
interface ResponseObject {
  content?: Record<string, { schema?: object }>;
  headers?: Record<string, HeaderObject>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { schemas: Record<string, object>; headers: Record<string, HeaderObject> };
}

export class OpenApi {
  private readonly validators = new Map<string, ReturnType<typeof compile>>();
  /** Every (operation, status) answer checked so far, for the coverage check. */
  readonly seen = new Set<string>();

  constructor(readonly doc: OpenApiDocument) {}

  static async fetch(stack: Stack): Promise<OpenApi> {
    const r = await request('GET', `${stack.baseUrl}/openapi.json`);
    if (r.status !== 200) throw new Error(`GET /v1/openapi.json answered ${r.status}`);
    return new OpenApi(r.json as OpenApiDocument);
  }

  /**
   * The answer conforms to the document: its status is documented for the
   * operation, its body validates against the documented schema, every required
   * header is present and every documented header has the documented type.
   */
  check(method: string, template: string, res: HttpResult): HttpResult {
    const op = this.doc.paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${template} is not in the OpenAPI document`);
    const response = op.responses[String(res.status)];
    if (!response) throw new Error(`${method} ${template} answered ${res.status}, which the document does not list: ${res.text}`);
    const key = `${method.toUpperCase()} ${template} ${res.status}`;
    this.seen.add(key);
    const schema = response.content?.['application/json']?.schema;
    if (schema) {
      let validate = this.validators.get(key);
      if (!validate) {
        validate = compile({ allOf: [schema], components: this.doc.components });
        this.validators.set(key, validate);
      }
      if (!validate(res.json)) {
        throw new Error(`${key}: body does not match the document: ${JSON.stringify(validate.errors)}\n${res.text}`);
      }
    } else if (res.text !== '') {
      throw new Error(`${key} should have no body, got ${res.text}`);
    }
    for (const [name, h] of Object.entries(response.headers ?? {})) {
      const header = h.$ref ? this.doc.components.headers[h.$ref.split('/').pop() ?? ''] : h;
      if (!header) throw new Error(`${key}: header ${name} refers to nothing`);
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) throw new Error(`${key}: required header ${name} missing`);
        continue;
      }
      const text = Array.isArray(value) ? value.join(',') : value;
      if (header.schema?.type === 'integer' && !/^\d+$/.test(text)) throw new Error(`${key}: ${name}: ${text} is not an integer`);
      if (header.schema?.const !== undefined && text !== header.schema.const)
        throw new Error(`${key}: ${name}: ${text} is not ${header.schema.const}`);
    }
    return res;
  }

  /** An answer outside any operation (404 unknown route, 405) is still the documented envelope. */
  checkEnvelope(res: HttpResult): HttpResult {
    const validate = compile({ allOf: [{ $ref: '#/components/schemas/ErrorEnvelope' }], components: this.doc.components });
    if (!validate(res.json)) throw new Error(`not the error envelope: ${res.text}`);
    if (!res.headers['x-request-id']) throw new Error('X-Request-Id missing');
    return res;
  }
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * The gateway's operator CLI (what `pnpm admin accounts|keys ...` routes to), run
 * against this stack's gateway database. Used for `accounts create`, which through
 * `pnpm admin` would also create webhook secrets in the webhook-dispatcher: these
 * suites involve no webhooks and so need neither it nor its CLI. Every other
 * operator command goes through `admin()` (scripts/admin.mjs), as an operator types it.
 */
export function gatewayAdmin(stack: Stack, args: string[]): unknown {
  const res = spawnSync(process.execPath, [path.join(REPO_ROOT, 'services', 'gateway', 'dist', 'cli.js'), ...args], {
    env: { ...process.env, MONGO_DB: stack.adminEnv['GATEWAY_MONGO_DB'] ?? '' },
    encoding: 'utf8',
  });
  if (res.status !== 0) throw new Error(`gateway cli ${args.join(' ')} failed (${res.status}): ${res.stderr}`);
  return JSON.parse(res.stdout);
}

/** A fresh account with its test and live keys, and limits set by the operator CLI when given. */
export async function newAccount(stack: Stack, opts: { plan?: string; rpm?: number; concurrency?: number } = {}): Promise<Account> {
  const acct = gatewayAdmin(stack, ['accounts', 'create', '--name', 'conformance', '--plan', opts.plan ?? 'prototyping']) as Account;
  const limits = [
    ...(opts.rpm ? ['--rpm', String(opts.rpm)] : []),
    ...(opts.concurrency ? ['--concurrency', String(opts.concurrency)] : []),
  ];
  if (limits.length > 0) await admin(['accounts', 'set-limits', acct.account_id, ...limits], stack.adminEnv);
  return acct;
}

/** The services the public API needs (the webhook-dispatcher only consumes events). */
export const API_SERVICES = ['gateway', 'task-orchestrator', 'executor', 'oauth-vault'] as const;

export function startApiStack(env: Partial<Record<ServiceName | '*', Record<string, string>>> = {}): Promise<Stack> {
  return startStack({ only: API_SERVICES, env });
}

/**
 * Rate limits count in fixed one-minute windows: a test that counts requests starts
 * only when enough of the current minute is left for it to finish inside it.
 */
export async function roomInWindow(seconds: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((r) => setTimeout(r, left + 50));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
