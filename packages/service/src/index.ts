export { runService, type ServiceContext, type StartedService } from './run-service.js';
export { connectDatabase, createBroker } from './connections.js';
export { replicaName } from './replica.js';
