export { runService, type ServiceContext, type StartedService } from './run-service.js';
