export { runService, type ServiceConfig, type ServiceContext, type ServiceDefinition, type StartedService } from './run-service.js';
