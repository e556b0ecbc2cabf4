import type { PendingDoc } from '../domain/stored-event.js';
import { EndpointQueues, type DeliveryJob } from './endpoint-queues.js';

function job(account: string, id: string): DeliveryJob {
  return { doc: { event_id: id, account_id: account, environment: 'test' } as PendingDoc, suspect: false };
}

function takeAll(queues: EndpointQueues): string[] {
  const out: string[] = [];
  for (let j = queues.take(); j; j = queues.take()) out.push(j.doc.event_id);
  return out;
}

describe('endpoint queues', () => {
  it('serves the endpoints round robin, each in its own order', () => {
    const queues = new EndpointQueues(10);
    for (const id of ['a1', 'a2', 'a3']) queues.add(job('acc_a', id));
    for (const id of ['b1', 'b2']) queues.add(job('acc_b', id));
    queues.add(job('acc_c', 'c1'));
    expect(takeAll(queues)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('starts no more of an endpoint than its limit until one is done, and serves the others meanwhile', () => {
    const queues = new EndpointQueues(2);
    for (const id of ['a1', 'a2', 'a3', 'a4']) queues.add(job('acc_a', id));
    queues.add(job('acc_b', 'b1'));
    expect(takeAll(queues)).toEqual(['a1', 'b1', 'a2']);
    queues.done(job('acc_a', 'a1').doc);
    expect(takeAll(queues)).toEqual(['a3']);
    queues.done(job('acc_a', 'a2').doc);
    queues.done(job('acc_a', 'a3').doc);
    expect(takeAll(queues)).toEqual(['a4']);
  });

  it('keeps the same endpoint in another environment apart', () => {
    const queues = new EndpointQueues(1);
    queues.add(job('acc_a', 'test1'));
    queues.add({ doc: { ...job('acc_a', 'live1').doc, environment: 'live' }, suspect: false });
    expect(takeAll(queues)).toEqual(['test1', 'live1']);
  });

  it('refuses a job when its endpoint has as many queued as it may hold, and only that endpoint', () => {
    const queues = new EndpointQueues(1, 2);
    expect(queues.add(job('acc_a', 'a1'))).toBe(true);
    expect(queues.add(job('acc_a', 'a2'))).toBe(true);
    expect(queues.add(job('acc_a', 'a3'))).toBe(false);
    expect(queues.add(job('acc_b', 'b1'))).toBe(true);
    expect(queues.take()?.doc.event_id).toBe('a1');
    expect(queues.add(job('acc_a', 'a3'))).toBe(true);
  });

  it('counts as startable only the jobs of endpoints below their limit', () => {
    const queues = new EndpointQueues(1);
    for (const id of ['a1', 'a2', 'a3']) queues.add(job('acc_a', id));
    queues.add(job('acc_b', 'b1'));
    expect(queues.startable()).toBe(4);
    expect(queues.take()?.doc.event_id).toBe('a1');
    expect(queues.startable()).toBe(1);
    queues.done(job('acc_a', 'a1').doc);
    expect(queues.startable()).toBe(3);
  });

  it('calls an endpoint busy when it is at its limit or has as many queued as its limit', () => {
    const queues = new EndpointQueues(2);
    const a = job('acc_a', 'a1').doc;
    expect(queues.isBusy(a)).toBe(false);
    queues.add(job('acc_a', 'a1'));
    expect(queues.isBusy(a)).toBe(false);
    queues.add(job('acc_a', 'a2'));
    expect(queues.isBusy(a)).toBe(true);
    takeAll(queues);
    expect(queues.isBusy(a)).toBe(true);
    queues.done(a);
    expect(queues.isBusy(a)).toBe(false);
    expect(queues.isBusy(job('acc_b', 'b1').doc)).toBe(false);
  });
});
