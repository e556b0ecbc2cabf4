import { int, str, type ToolDef } from '../../types.js';

const url = str({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'http(s) URL' });
const response = {
  type: 'object',
  properties: {
    url: str(),
    status: int(),
    content_type: str(),
    body: str(),
    json: {},
    bytes: int(),
  },
  required: ['url', 'status', 'content_type', 'body', 'bytes'],
} as const;

export const HTTP_TOOL: ToolDef = {
  name: 'http',
  description:
    'Fetches a public http(s) URL. Private, loopback and link-local addresses are refused (SSRF guard); responses are limited in size and time.',
  service: null,
  keywords: ['http', 'https', 'url', 'fetch', 'download', 'webpage', 'website', 'endpoint', 'api', 'webhook'],
  actions: [
    {
      name: 'fetch',
      description: 'GET a URL; answers status, content type and body (and `json` when the body is JSON).',
      keywords: ['fetch', 'get', 'download', 'read', 'load', 'retrieve', 'check', 'open'],
      input: {
        type: 'object',
        properties: { url, headers: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 20 } },
        required: ['url'],
        additionalProperties: false,
      },
      output: response,
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'post',
      description: 'POST a JSON body to a URL (sends the step’s Idempotency-Key header). Simulated with test keys.',
      keywords: ['post', 'send', 'submit', 'call', 'notify', 'trigger'],
      input: {
        type: 'object',
        properties: { url, json: {}, headers: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 20 } },
        required: ['url', 'json'],
        additionalProperties: false,
      },
      output: response,
      scopes: [],
      side_effect: 'write',
    },
  ],
};
