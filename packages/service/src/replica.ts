import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * This process's name among its service's replicas: host, pid and a random part (a restarted
 * container may reuse a pid). Names its own broker queues, its partition group membership and
 * its claims; never an id a client sees.
 */
export function replicaName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}
