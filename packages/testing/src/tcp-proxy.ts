import net from 'node:net';

export interface TcpProxy {
  /** The port on 127.0.0.1 that leads to the target. */
  port: number;
  /** Drops every connection and refuses new ones (the server is gone, as far as clients can tell). */
  cut(): Promise<void>;
  /** Listens again on the same port, forwarding again. */
  restore(): Promise<void>;
  /** Bytes from clients stop reaching the target (a network that silently drops them). */
  blackhole(): void;
  close(): Promise<void>;
}

/** A TCP proxy to a real server (RabbitMQ, the MongoDB-wire server) that a test can cut, blackhole and restore. */
export async function startTcpProxy(host: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let swallow = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', (c: Buffer) => {
      if (!swallow) upstream.write(c);
    });
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = (port: number) => new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  const stop = () => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  };
  return {
    port,
    async cut() {
      await stop();
    },
    async restore() {
      swallow = false;
      await listen(port);
    },
    blackhole() {
      swallow = true;
    },
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
