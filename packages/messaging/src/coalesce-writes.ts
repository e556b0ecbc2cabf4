import type { ChannelModel } from 'amqplib';

/** The parts of amqplib's Connection this relies on (amqplib 2.x: lib/connection.js, lib/mux.js). */
interface MuxedConnection {
  muxer?: { _readIncoming?: unknown };
  stream?: { cork?: unknown; uncork?: unknown };
}

/**
 * amqplib writes every frame to the socket on its own: each channel's outgoing buffer is an object
 * stream, and its muxer, once per turn of the event loop, writes them one `write` at a time. So
 * the acks and publishes of several channels made in one turn (a partition consumer's ack beside a
 * publish, a dispatcher's batch of acks) are as many write system calls, each waking the broker.
 * This corks the socket for the muxer's pass: the same frames, in the same order, leave in the same
 * turn, in one `writev`. Backpressure is unchanged (a write past the socket's high-water mark still
 * stops the pass until `drain`).
 *
 * It reaches into amqplib's internals: on a version without them nothing is changed and false is
 * returned (coalesce-writes.test.ts checks the installed version has them).
 */
export function coalesceFrameWrites(model: ChannelModel): boolean {
  const connection = (model as unknown as { connection?: MuxedConnection }).connection;
  const muxer = connection?.muxer;
  const stream = connection?.stream;
  if (!muxer || !stream) return false;
  const pass = muxer._readIncoming;
  const { cork, uncork } = stream;
  if (typeof pass !== 'function' || typeof cork !== 'function' || typeof uncork !== 'function') return false;
  muxer._readIncoming = function corkedPass(this: unknown): void {
    cork.call(stream);
    try {
      pass.call(this);
    } finally {
      uncork.call(stream);
    }
  };
  return true;
}
