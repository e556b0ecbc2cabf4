import mongoose from 'mongoose';
import { isDatabaseUnavailable } from '@tes/errors';

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a lost connection', new mongoose.mongo.MongoNetworkError('connection 3 to 127.0.0.1:27017 closed')],
    ['a network timeout', new mongoose.mongo.MongoNetworkTimeoutError('timed out')],
    ['no server selected in time (driver)', Object.assign(new Error('timed out'), { name: 'MongoServerSelectionError' })],
    ['no server selected in time (mongoose)', Object.assign(new Error('timed out'), { name: 'MongooseServerSelectionError' })],
    ['a client not connected', new mongoose.mongo.MongoNotConnectedError('not connected')],
    ['a cleared pool', Object.assign(new Error('pool cleared'), { name: 'MongoPoolClearedError' })],
    ['a closed topology', new mongoose.mongo.MongoTopologyClosedError()],
  ])('is true for %s', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['a duplicate key', Object.assign(new Error('E11000'), { name: 'MongoServerError', code: 11000 })],
    ['a validation error', Object.assign(new Error('invalid'), { name: 'ValidationError' })],
    ['a plain error', new Error('boom')],
    ['not an error', 'MongoNetworkError'],
    ['nothing', undefined],
  ])('is false for %s', (_what, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });
});
