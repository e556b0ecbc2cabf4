import type { Connection } from 'mongoose';
import type { KeyRing } from '@tes/sealing';
import { AttemptClaimRepository } from './attempt-claim.repository.js';
import { BeatRepository } from './beat.repository.js';
import { DeliveryAttemptRepository } from './delivery-attempt.repository.js';
import { EndpointRepository } from './endpoint.repository.js';
import { EventKeyRepository } from './event-key.repository.js';
import { EventRepository } from './event.repository.js';
import { PendingRepository } from './pending.repository.js';
import { SecretRepository } from './secret.repository.js';

export interface Repositories {
  endpoints: EndpointRepository;
  secrets: SecretRepository;
  events: EventRepository;
  pending: PendingRepository;
  eventKeys: EventKeyRepository;
  attempts: DeliveryAttemptRepository;
  claims: AttemptClaimRepository;
  beats: BeatRepository;
}

/** Every collection of the dispatcher's database, registered on one connection; `ring` seals the signing secrets. */
export function createRepositories(conn: Connection, ring: KeyRing): Repositories {
  const pending = new PendingRepository(conn);
  return {
    endpoints: new EndpointRepository(conn),
    secrets: new SecretRepository(conn, ring),
    events: new EventRepository(conn, pending),
    pending,
    eventKeys: new EventKeyRepository(conn),
    attempts: new DeliveryAttemptRepository(conn),
    claims: new AttemptClaimRepository(conn),
    beats: new BeatRepository(conn),
  };
}
