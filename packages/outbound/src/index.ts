export { classifyAddress } from './address.js';
export { OutboundPolicy, OutboundRefusedError, REFUSED_MESSAGE, outboundEnv, type Resolver } from './policy.js';
export { outboundAgents, outboundRequest } from './request.js';
