export { classifyAddress, PRIVATE_RANGES } from './address.js';
export { AllowList, parseHostList } from './allow-list.js';
export { OutboundPolicy, OutboundRefusedError, REFUSED_MESSAGE, hostOf, outboundEnv, type PolicyOptions, type Resolver } from './policy.js';
export { outboundAgents, outboundRequest, OutboundTimeoutError, type OutboundInit, type OutboundResponse } from './request.js';
