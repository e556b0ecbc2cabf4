/**
 * Connection recovery: the broker's connection is closed by RabbitMQ (rabbitmqctl close_connection)
 * or cut by a TCP proxy; consumers are re-attached, publishes during the outage fail fast.
 * Every test works in its own namespace and deletes what it declared; rabbitmqctl only ever
 * closes the connection this test named.
 */
import { connect as amqpConnect, type Channel, type ChannelModel } from 'amqplib';
import { EXCHANGES, routingKeyFor, type TaskCancel } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import { AMQP_URL, memoryLogger, queueCounts, rabbitmqctl, startTcpProxy, uniqueName, vhostOf, waitFor, type TcpProxy } from '@tes/testing';
import { Broker, BrokerUnavailableError, type Delivery, type QueueSpec } from './broker.js';

const ACCOUNT = 'acc_recovery';
const SPEC: QueueSpec = { name: 'work', exchange: EXCHANGES.commands, bindings: [routingKeyFor('task.cancel', ACCOUNT)] };

function cancelData(n: number | string): TaskCancel {
  return { task_id: `task_${n}`, account_id: ACCOUNT, environment: 'test' };
}

/** Erlang pids (what `rabbitmqctl close_connection` takes) of the connections whose connection_name is `name`. */
async function connectionsNamed(name: string): Promise<string[]> {
  const out = await rabbitmqctl('list_connections', 'pid', 'client_properties', '-q', '--no-table-headers');
  return out
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([, props]) => props?.includes(`{"connection_name","${name}"}`))
    .map(([pid]) => pid!);
}

/** Unacknowledged messages of one queue. */
async function unacked(fullName: string): Promise<number | undefined> {
  return (await queueCounts(vhostOf(AMQP_URL), fullName))?.unacked;
}

/** Wraps a logger to run `onWarn` synchronously when a warning line is logged. */
function spyLogger(base: Logger, onWarn: (msg: string) => void): Logger {
  return {
    debug: (m, x) => base.debug(m, x),
    info: (m, x) => base.info(m, x),
    error: (m, x) => base.error(m, x),
    warn: (m, x) => {
      onWarn(m);
      base.warn(m, x);
    },
    child: () => spyLogger(base, onWarn),
  };
}

/** How a promise settled, and how long it took. */
async function outcome(p: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const t = Date.now();
  try {
    await p;
    return { error: undefined, ms: Date.now() - t };
  } catch (error) {
    return { error, ms: Date.now() - t };
  }
}

/** A proxy to RabbitMQ, with the client URL that goes through it. */
async function startProxy(target: URL): Promise<TcpProxy & { url: string }> {
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5672));
  return { ...proxy, url: `amqp://${target.username}:${target.password}@127.0.0.1:${proxy.port}${target.pathname}` };
}

describe('Broker connection recovery (RabbitMQ integration)', () => {
  let ns: string;
  let brokers: Broker[];
  let admin: ChannelModel;
  let adminCh: Channel;

  beforeEach(async () => {
    ns = uniqueName('t');
    brokers = [];
    admin = await amqpConnect(AMQP_URL);
    adminCh = await admin.createChannel();
  });

  afterEach(async () => {
    await Promise.all(brokers.map((b) => b.close(2000)));
    await adminCh.deleteQueue(`${ns}.${SPEC.name}`);
    await adminCh.deleteQueue(`${ns}.${SPEC.name}.dead`);
    for (const ex of Object.values(EXCHANGES)) await adminCh.deleteExchange(`${ns}.${ex}`);
    await admin.close();
  });

  it('re-attaches the consumer after RabbitMQ closes the connection, and rejects a publish made during the outage with BrokerUnavailableError', async () => {
    const connectionName = `${ns}-consumer`;
    let duringOutage: { publish: Promise<unknown>; request: Promise<unknown>; connected: boolean } | undefined;
    const logger: Logger = spyLogger(memoryLogger('recovery').logger, (msg) => {
      // The instant the connection is reported lost: publish and request must fail, not wait or buffer.
      if (msg === 'broker disconnected, recovering' && !duringOutage) {
        duringOutage = {
          publish: broker.publish('task.cancel', cancelData('outage'), { partitionKey: ACCOUNT }),
          request: broker.request('task.cancel', cancelData('outage-req'), { partitionKey: ACCOUNT, timeoutMs: 5000 }),
          connected: broker.isConnected,
        };
        duringOutage.publish.catch(() => undefined);
        duringOutage.request.catch(() => undefined);
      }
    });
    const broker: Broker = new Broker({ url: AMQP_URL, source: 'recovery', logger, namespace: ns, connectionName });
    brokers.push(broker);
    await broker.connect();
    const handled: Delivery[] = [];
    await broker.consume(SPEC, async (d) => {
      handled.push(d);
    });
    await broker.publish('task.cancel', cancelData('before'), { partitionKey: ACCOUNT });
    await waitFor(() => handled.length === 1, { what: 'message before the outage' });
    // Its ack has reached RabbitMQ (else the outage would legitimately redeliver it).
    await waitFor(async () => (await unacked(`${ns}.work`)) === 0, { what: 'ack of the message before the outage' });

    const [before, ...others] = await connectionsNamed(connectionName);
    expect(before).toBeDefined();
    expect(others).toEqual([]);
    await rabbitmqctl('close_connection', before!, 'test: broker recovery');

    await waitFor(() => duringOutage, { what: 'the disconnect' });
    expect(duringOutage!.connected).toBe(false);
    const pub = await outcome(duringOutage!.publish);
    expect(pub.error).toBeInstanceOf(BrokerUnavailableError);
    expect(pub.ms).toBeLessThan(100);
    expect((await outcome(duringOutage!.request)).error).toBeInstanceOf(BrokerUnavailableError);

    // Recovered: a new connection under the same name, the consumer attached once again.
    await waitFor(() => broker.isConnected, { what: 'reconnection' });
    const after = await connectionsNamed(connectionName);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before);
    expect((await adminCh.checkQueue(`${ns}.work`)).consumerCount).toBe(1);

    await broker.publish('task.cancel', cancelData('after'), { partitionKey: ACCOUNT });
    await waitFor(() => handled.length >= 2, { what: 'message after recovery' });
    // The publish that failed during the outage was not buffered and re-sent behind our back.
    expect(handled.map((d) => d.data)).toEqual([cancelData('before'), cancelData('after')]);
    expect(await broker.queueDepth('work')).toBe(0);
  });

  it('fails publish, request and queueDepth fast with BrokerUnavailableError for the whole of a longer outage, then recovers and consumes again', async () => {
    const proxy = await startProxy(new URL(AMQP_URL));
    try {
      const broker = new Broker({ url: proxy.url, source: 'recovery', logger: memoryLogger('recovery').logger, namespace: ns });
      brokers.push(broker);
      await broker.connect();
      const handled: Delivery[] = [];
      await broker.consume(SPEC, async (d) => {
        handled.push(d);
      });
      await broker.publish('task.cancel', cancelData('before'), { partitionKey: ACCOUNT });
      await waitFor(() => handled.length === 1, { what: 'message before the outage' });
      await waitFor(async () => (await unacked(`${ns}.work`)) === 0, { what: 'ack of the message before the outage' });

      await proxy.cut();
      await waitFor(() => !broker.isConnected, { what: 'the disconnect' });
      const outageEnds = Date.now() + 1500;
      let attempts = 0;
      while (Date.now() < outageEnds) {
        attempts++;
        const t = Date.now();
        const results = await Promise.allSettled([
          broker.publish('task.cancel', cancelData(`outage-${attempts}`), { partitionKey: ACCOUNT }),
          broker.request('task.cancel', cancelData('outage-req'), { partitionKey: ACCOUNT, timeoutMs: 5000 }),
          broker.queueDepth('work'),
        ]);
        // Rejected at once (no waiting for the connection, no buffering), each with BrokerUnavailableError.
        expect(Date.now() - t).toBeLessThan(250);
        for (const r of results) {
          expect(r.status).toBe('rejected');
          expect((r as PromiseRejectedResult).reason).toBeInstanceOf(BrokerUnavailableError);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(attempts).toBeGreaterThan(5);

      await proxy.restore();
      await waitFor(() => broker.isConnected, { what: 'reconnection', timeoutMs: 15_000 });
      await broker.publish('task.cancel', cancelData('after'), { partitionKey: ACCOUNT });
      await waitFor(() => handled.length >= 2, { what: 'message after recovery' });
      expect(handled.map((d) => d.data)).toEqual([cancelData('before'), cancelData('after')]);
    } finally {
      await Promise.all(brokers.map((b) => b.close(2000)));
      await proxy.close();
    }
  });

  it('rejects a publish whose confirm is still outstanding when the connection drops, instead of hanging', async () => {
    const proxy = await startProxy(new URL(AMQP_URL));
    try {
      const broker = new Broker({ url: proxy.url, source: 'recovery', logger: memoryLogger('recovery').logger, namespace: ns });
      brokers.push(broker);
      await broker.connect();
      await broker.declare(SPEC);

      proxy.blackhole(); // the publish leaves the client but never reaches RabbitMQ: no confirm
      let settled = false;
      const pending = outcome(broker.publish('task.cancel', cancelData('lost'), { partitionKey: ACCOUNT })).finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 200));
      expect(settled).toBe(false); // waiting for the confirm, as it should

      await proxy.cut();
      const r = await pending;
      expect(r.error).toBeInstanceOf(BrokerUnavailableError);

      await proxy.restore();
      await waitFor(() => broker.isConnected, { what: 'reconnection', timeoutMs: 15_000 });
      // Not buffered and re-sent after recovery: the caller owns the retry.
      expect(await broker.queueDepth('work')).toBe(0);
    } finally {
      await Promise.all(brokers.map((b) => b.close(2000)));
      await proxy.close();
    }
  });
});
