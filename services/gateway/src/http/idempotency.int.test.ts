import type { Response } from 'express';
import type { Connection } from 'mongoose';
import { AppError, isAppError } from '@tes/errors';
import { connectMongo, ensureIndexes } from '@tes/store';
import { MONGO_URL, memoryLogger, uniqueName } from '@tes/testing';
import { IdempotencyRepository } from '../store/idempotency.repository.js';
import { idempotent, type Answer } from './idempotency.js';

/** Idempotency-Key handling against the real database, with two repositories standing for two replicas. */
describe('Idempotency-Key (real database)', () => {
  const { logger } = memoryLogger('gateway');
  const dbName = uniqueName('gw_idem');
  const conns: Connection[] = [];
  const repos: IdempotencyRepository[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const conn = await connectMongo({ url: MONGO_URL, dbName, logger });
      conns.push(conn);
      repos.push(new IdempotencyRepository(conn));
    }
    await ensureIndexes(conns[0]!);
  });

  afterAll(async () => {
    await conns[0]?.dropDatabase();
    await Promise.all(conns.map((c) => c.close()));
  });

  interface Outcome {
    status: number;
    body: unknown;
    headers: Record<string, string>;
  }

  /** Runs one request through `idempotent` and returns what it answered (or the AppError it threw). */
  async function call(
    repo: IdempotencyRepository,
    scope: { accountId: string; key: string | undefined; body: unknown },
    run: (taskId: string) => Promise<Answer>,
    leaseMs = 30_000,
  ): Promise<Outcome> {
    const out: Outcome = { status: 0, body: undefined, headers: {} };
    const res = {
      setHeader(k: string, v: string) {
        out.headers[k] = v;
        return res;
      },
      status(s: number) {
        out.status = s;
        return res;
      },
      json(b: unknown) {
        out.body = b;
        return res;
      },
    } as unknown as Response;
    try {
      await idempotent({ keys: repo, leaseMs }, { ...scope, environment: 'test' }, res, run);
    } catch (err) {
      if (!isAppError(err)) throw err;
      return { status: err.status, body: { error: { code: err.code, message: err.message } }, headers: err.headers };
    }
    return out;
  }

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('runs 20 concurrent duplicates once: every answer is the original 201 or 409 in progress', async () => {
    const account = uniqueName('acct');
    const runs: string[] = [];
    const run = async (taskId: string) => {
      runs.push(taskId);
      await sleep(300);
      return { status: 201, body: { id: taskId } };
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call(repos[i % 2]!, { accountId: account, key: 'k-1', body: { prompt: 'p' } }, run)),
    );
    expect(runs).toHaveLength(1);
    const created = answers.filter((a) => a.status === 201);
    const busy = answers.filter((a) => a.status === 409);
    expect(created.length + busy.length).toBe(20);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const a of created) expect(a.body).toEqual({ id: runs[0] });
    for (const b of busy) expect(b.body).toMatchObject({ error: { code: 'idempotency_key_in_progress' } });

    const replay = await call(repos[1]!, { accountId: account, key: 'k-1', body: { prompt: 'p' } }, run);
    expect(replay).toMatchObject({ status: 201, body: { id: runs[0] }, headers: { 'Idempotent-Replayed': 'true' } });
    expect(runs).toHaveLength(1);
  });

  it('answers 409 idempotency_key_reused for the same key with another body, and keeps keys per account', async () => {
    const account = uniqueName('acct');
    const run = async (taskId: string) => ({ status: 201, body: { id: taskId } });
    await call(repos[0]!, { accountId: account, key: 'k', body: { prompt: 'a' } }, run);
    const other = await call(repos[0]!, { accountId: account, key: 'k', body: { prompt: 'b' } }, run);
    expect(other).toMatchObject({ status: 409, body: { error: { code: 'idempotency_key_reused' } } });
    const elsewhere = await call(repos[0]!, { accountId: uniqueName('acct'), key: 'k', body: { prompt: 'b' } }, run);
    expect(elsewhere.status).toBe(201);
  });

  it('replays a stored 4xx answer and lets a 5xx be retried with the same task id', async () => {
    const account = uniqueName('acct');
    let calls = 0;
    const refused = await call(repos[0]!, { accountId: account, key: 'no-tool', body: { prompt: 'x' } }, async () => {
      calls++;
      throw new AppError('no_matching_tool', 'nothing matches');
    });
    expect(refused.status).toBe(422);
    const again = await call(repos[1]!, { accountId: account, key: 'no-tool', body: { prompt: 'x' } }, async () => {
      calls++;
      return { status: 201, body: {} };
    });
    expect(again).toMatchObject({ status: 422, body: { error: { code: 'no_matching_tool', message: 'nothing matches' } } });
    expect(calls).toBe(1);

    const ids: string[] = [];
    const down = await call(repos[0]!, { accountId: account, key: 'flaky', body: { prompt: 'y' } }, async (taskId) => {
      ids.push(taskId);
      throw new AppError('temporarily_unavailable', 'later');
    });
    expect(down.status).toBe(503);
    const retried = await call(repos[1]!, { accountId: account, key: 'flaky', body: { prompt: 'y' } }, async (taskId) => {
      ids.push(taskId);
      return { status: 201, body: { id: taskId } };
    });
    expect(retried.status).toBe(201);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]); // the orchestrator sees the same task id: no second task
  });

  it('takes over a record whose holder vanished after the lease, with the same task id', async () => {
    const account = uniqueName('acct');
    const ids: string[] = [];
    const hung = call(
      repos[0]!,
      { accountId: account, key: 'hung', body: { prompt: 'z' } },
      async (taskId) => {
        ids.push(taskId);
        await sleep(1500);
        return { status: 201, body: { id: taskId } };
      },
      500,
    );
    await sleep(200);
    const early = await call(
      repos[1]!,
      { accountId: account, key: 'hung', body: { prompt: 'z' } },
      async () => ({ status: 201, body: {} }),
      500,
    );
    expect(early.status).toBe(409);
    await sleep(500);
    const late = await call(
      repos[1]!,
      { accountId: account, key: 'hung', body: { prompt: 'z' } },
      async (taskId) => {
        ids.push(taskId);
        return { status: 201, body: { id: taskId } };
      },
      500,
    );
    expect(late.status).toBe(201);
    await hung;
    expect(new Set(ids).size).toBe(1);
  });

  it('treats an expired record as absent', async () => {
    const account = uniqueName('acct');
    const run = async (taskId: string) => ({ status: 201, body: { id: taskId } });
    const first = await call(repos[0]!, { accountId: account, key: 'old', body: { prompt: 'a' } }, run);
    await conns[0]!
      .collection('idempotency_keys')
      .updateOne({ _id: `${account}:test:old` } as never, { $set: { expires_at: new Date(Date.now() - 1) } });
    const second = await call(repos[1]!, { accountId: account, key: 'old', body: { prompt: 'other body is fine now' } }, run);
    expect(second.status).toBe(201);
    expect(second.body).not.toEqual(first.body);
    expect(await repos[0]!.sweep(new Date())).toBe(0); // the fresh record is not expired
  });

  it('refuses malformed keys with 400 before touching the database', async () => {
    for (const key of ['', 'x'.repeat(256), 'é', 'a\tb']) {
      const r = await call(repos[0]!, { accountId: 'acct_x', key, body: {} }, async () => ({ status: 201, body: {} }));
      expect(r).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    }
  });
});
