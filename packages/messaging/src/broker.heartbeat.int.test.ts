/**
 * The AMQP heartbeat every Broker connection asks for: what RabbitMQ agreed to (rabbitmqctl's
 * `timeout` of the connection), and a broker that goes silent (a TCP proxy that swallows the
 * client's bytes: no RST, no FIN) noticed within a few heartbeats rather than RabbitMQ's 60 s.
 */
import { connect as amqpConnect } from 'amqplib';
import { EXCHANGES } from '@tes/contracts';
import { AMQP_URL, memoryLogger, rabbitmqctl, startTcpProxy, uniqueName, waitFor, type TcpProxy } from '@tes/testing';
import { Broker } from './broker.js';

/** The negotiated heartbeat (seconds) of the connections whose connection_name is `name`. */
async function heartbeatsOf(name: string): Promise<number[]> {
  const out = await rabbitmqctl('list_connections', 'timeout', 'client_properties', '-q', '--no-table-headers');
  return out
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([, props]) => props?.includes(`{"connection_name","${name}"}`))
    .map(([timeout]) => Number(timeout));
}

describe('Broker heartbeat (RabbitMQ integration)', () => {
  const brokers: Broker[] = [];
  const proxies: TcpProxy[] = [];
  const namespaces: string[] = [];

  afterAll(async () => {
    await Promise.all(brokers.map((b) => b.close(0)));
    await Promise.all(proxies.map((p) => p.close()));
    // The exchanges each connect declared (no queue was).
    const admin = await amqpConnect(AMQP_URL);
    const ch = await admin.createChannel();
    for (const ns of namespaces) for (const ex of Object.values(EXCHANGES)) await ch.deleteExchange(`${ns}.${ex}`);
    await admin.close();
  });

  function broker(url: string, heartbeatSeconds?: number): { broker: Broker; name: string } {
    const ns = uniqueName('hb');
    namespaces.push(ns);
    const b = new Broker({
      url,
      source: 'heartbeat-test',
      logger: memoryLogger('heartbeat').logger,
      namespace: ns,
      connectionName: ns,
      ...(heartbeatSeconds === undefined ? {} : { heartbeatSeconds }),
    });
    brokers.push(b);
    return { broker: b, name: ns };
  }

  it('asks for a 15 s heartbeat by default, and for the configured one otherwise', async () => {
    const byDefault = broker(AMQP_URL);
    const configured = broker(AMQP_URL, 7);
    await byDefault.broker.connect();
    await configured.broker.connect();
    await waitFor(() => byDefault.broker.isConnected && configured.broker.isConnected, { what: 'both connected' });
    expect(await heartbeatsOf(byDefault.name)).toEqual([15]);
    expect(await heartbeatsOf(configured.name)).toEqual([7]);
  });

  it('notices a broker that went silent within a few heartbeats, and reconnects once it answers again', async () => {
    const target = new URL(AMQP_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5672));
    proxies.push(proxy);
    const url = `amqp://${target.username}:${target.password}@127.0.0.1:${proxy.port}${target.pathname}`;
    const { broker: b } = broker(url, 1);
    await b.connect();
    await waitFor(() => b.isConnected, { what: 'connected through the proxy' });

    proxy.blackhole();
    const lostAt = Date.now();
    // Without a heartbeat nothing would notice: the proxy keeps the TCP connection open. RabbitMQ's
    // own default (60 s) would take a minute; with 1 s it takes about two. 20 s is a generous bound.
    await waitFor(() => !b.isConnected, { what: 'the silent broker to be noticed', timeoutMs: 20_000, intervalMs: 100 });
    expect(Date.now() - lostAt).toBeLessThan(20_000);

    await proxy.cut();
    await proxy.restore();
    await waitFor(() => b.isConnected, { what: 'reconnection', timeoutMs: 30_000 });
  }, 60_000);
});
