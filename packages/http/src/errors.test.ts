import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { MongoBulkWriteError, MongoNetworkError } from 'mongodb';
import { memoryLogger } from '@tes/testing';
import { errorMiddleware } from './errors.js';

/** The one mapping from errors to HTTP, through a real express app and a real request. */
describe('error middleware', () => {
  const { logger, lines } = memoryLogger('http-test');
  let server: http.Server;
  let base: string;
  let toThrow: unknown;

  beforeAll(async () => {
    const app = express();
    app.get('/boom', () => {
      throw toThrow;
    });
    app.use(errorMiddleware(logger));
    server = http.createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const answer = async (err: unknown) => {
    toThrow = err;
    const res = await fetch(`${base}/boom`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error: { code: string } } };
  };
  const nodeError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it.each([
    ['a MongoNetworkError', Object.assign(new Error('connection closed'), { name: 'MongoNetworkError' })],
    ['an EPIPE the driver did not wrap', nodeError('EPIPE', 'This socket has been ended by the other party')],
    ['an ECONNRESET', nodeError('ECONNRESET', 'read ECONNRESET')],
    ['an ECONNREFUSED', nodeError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:27017')],
    // What the driver throws when the connection drops during an insertMany (as the chaos suite saw).
    ['a MongoBulkWriteError around a lost connection', new MongoBulkWriteError(new MongoNetworkError('read ECONNRESET'), {} as never)],
  ])('answers 503 temporarily_unavailable with Retry-After for %s', async (_what, err) => {
    expect(await answer(err)).toEqual({
      status: 503,
      retryAfter: '1',
      body: { error: expect.objectContaining({ code: 'temporarily_unavailable' }) },
    });
  });

  it('answers 500 internal_error for a MongoBulkWriteError of the documents themselves', async () => {
    const res = await answer(new MongoBulkWriteError({ message: 'E11000 duplicate key', code: 11000, writeErrors: [] }, {} as never));
    expect(res.status).toBe(500);
  });

  it('answers 500 internal_error, without internals, for anything else', async () => {
    const res = await answer(nodeError('ERR_SOMETHING', 'secret internals at /srv/app.js:12'));
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('internal_error');
    expect(JSON.stringify(res.body)).not.toContain('secret internals');
    expect(lines().some((l) => l.includes('unhandled error'))).toBe(true);
  });
});
