import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createLogger } from '@tes/logger';
import { ListenError, listen } from './listen.js';
import { closeServer, startOpsServer } from './ops.js';

describe('listen', () => {
  let taken: http.Server;
  let port: number;

  beforeAll(async () => {
    taken = http.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    port = (taken.address() as AddressInfo).port;
  });

  afterAll(() => closeServer(taken));

  it('rejects with a ListenError naming the variable, the port and EADDRINUSE when the port is taken', async () => {
    const server = http.createServer();
    const err = await listen(server, port, '127.0.0.1', 'PORT').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListenError);
    expect((err as ListenError).message).toBe(`PORT ${port} is in use (EADDRINUSE)`);
    expect(server.listening).toBe(false);
    expect(server.listenerCount('error')).toBe(0);
  });

  it('resolves once listening and leaves no listener of its own behind', async () => {
    const server = http.createServer();
    const listeners = () => [server.listenerCount('error'), server.listenerCount('listening')];
    const before = listeners();
    await listen(server, 0, '127.0.0.1', 'PORT');
    try {
      expect(server.listening).toBe(true);
      expect(listeners()).toEqual(before);
    } finally {
      await closeServer(server);
    }
  });

  it('makes startOpsServer reject naming OPS_PORT instead of crashing on an unhandled error event', async () => {
    const logger = createLogger({ service: 'test', stream: new PassThrough(), level: 'error' });
    const err = await startOpsServer({ port, ready: () => true, logger }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListenError);
    expect((err as ListenError).message).toBe(`OPS_PORT ${port} is in use (EADDRINUSE)`);
  });
});
