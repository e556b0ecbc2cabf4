/**
 * coalesceFrameWrites against the installed amqplib and a real RabbitMQ: the internals it relies
 * on are there (an amqplib upgrade that moves them fails here, not silently), and the frames of
 * several channels sent in one turn leave in one socket write, in order, all delivered.
 */
import { connect, type ChannelModel } from 'amqplib';
import { AMQP_URL, uniqueName, waitFor } from '@tes/testing';
import { coalesceFrameWrites } from './coalesce-writes.js';

type WriteFn = (...args: unknown[]) => unknown;

/** Counts the socket's writes (one per `_write`, one per `_writev` batch). */
function countWrites(model: ChannelModel): { writes: number } {
  const stream = (model as unknown as { connection: { stream: { _write: WriteFn; _writev?: WriteFn } } }).connection.stream;
  const counter = { writes: 0 };
  const write = stream._write.bind(stream);
  stream._write = (...args: unknown[]) => {
    counter.writes++;
    return write(...args);
  };
  const writev = stream._writev?.bind(stream);
  if (writev) {
    stream._writev = (...args: unknown[]) => {
      counter.writes++;
      return writev(...args);
    };
  }
  return counter;
}

async function publishOnThreeChannels(model: ChannelModel, queues: string[]): Promise<{ writes: number; received: string[] }> {
  const channels = await Promise.all(queues.map(() => model.createChannel()));
  for (const [i, q] of queues.entries()) await channels[i]!.assertQueue(q, { exclusive: true });
  const received: string[] = [];
  for (const [i, q] of queues.entries()) {
    await channels[i]!.consume(
      q,
      (m) => {
        if (m) received.push(m.content.toString());
      },
      { noAck: true },
    );
  }
  // Let every earlier frame (the consumes' replies) leave before counting.
  await new Promise((r) => setImmediate(r));
  const counter = countWrites(model);
  for (const [i, q] of queues.entries()) channels[i]!.sendToQueue(q, Buffer.from(`m${i}`));
  await waitFor(() => received.length === queues.length, { what: 'the three messages' });
  return { writes: counter.writes, received: received.sort() };
}

describe('coalesceFrameWrites (amqplib + RabbitMQ integration)', () => {
  const models: ChannelModel[] = [];
  afterAll(async () => {
    await Promise.all(models.map((m) => m.close().catch(() => undefined)));
  });

  it('finds amqplib internals it relies on in the installed version', async () => {
    const model = await connect(AMQP_URL);
    models.push(model);
    expect(coalesceFrameWrites(model)).toBe(true);
  });

  it('sends the frames of three channels made in one turn in one socket write, all delivered', async () => {
    const plain = await connect(AMQP_URL);
    const corked = await connect(AMQP_URL);
    models.push(plain, corked);
    coalesceFrameWrites(corked);
    const before = await publishOnThreeChannels(plain, [uniqueName('cw'), uniqueName('cw'), uniqueName('cw')]);
    const after = await publishOnThreeChannels(corked, [uniqueName('cw'), uniqueName('cw'), uniqueName('cw')]);
    expect(before.received).toEqual(['m0', 'm1', 'm2']);
    expect(after.received).toEqual(['m0', 'm1', 'm2']);
    expect(before.writes).toBe(3);
    expect(after.writes).toBe(1);
  });
});
