import { BUILT_IN_TOOLS } from '@tes/catalog';
import type { ToolView } from '@tes/contracts';
import { planWithRules } from '@tes/planner';
import { customStep, customToolDef } from './custom-tools.js';
import { RESERVED_TOOL_NAMES } from './tool-admin.js';

const CRM: ToolView = {
  name: 'acme_crm',
  description: 'Contacts in the Acme CRM',
  keywords: ['customer'],
  base_url: 'https://crm.example.com/api',
  created_at: '2026-01-01T00:00:00.000Z',
  oauth: {
    authorize_url: 'https://crm.example.com/oauth/authorize',
    token_url: 'https://crm.example.com/oauth/token',
    client_id: 'c',
    scopes: ['contacts'],
  },
  actions: [
    {
      name: 'create_contact',
      description: 'Create a contact',
      method: 'POST',
      path: '/contacts',
      input_schema: {
        type: 'object',
        properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' }, company: { type: 'string' } },
        required: ['name'],
      },
      scopes: ['contacts.write'],
    },
    {
      name: 'list_contacts',
      description: 'List contacts',
      method: 'GET',
      path: '/contacts',
      input_schema: {
        type: 'object',
        properties: { limit: { type: 'integer' }, vip_only: { type: 'boolean' }, status: { type: 'string', enum: ['active', 'archived'] } },
      },
    },
    {
      name: 'delete_contact',
      description: 'Delete a contact',
      method: 'DELETE',
      path: '/contacts/{contact_id}',
      keywords: ['remove'],
      input_schema: { type: 'object', properties: { contact_id: { type: 'string' } }, required: ['contact_id'] },
    },
  ],
};

const TOOLS = [...BUILT_IN_TOOLS, customToolDef(CRM)];
const plan = (prompt: string) => planWithRules(prompt, { tools: TOOLS, now: new Date('2026-01-01T00:00:00Z') });
const toolOf = (prompt: string) => {
  const outcome = plan(prompt);
  return outcome.ok ? outcome.plan.tool : undefined;
};

describe('custom tools in the planner', () => {
  it('become catalog entries: service = own name when OAuth is configured, scopes merged, side effects from the method', () => {
    const def = customToolDef(CRM);
    expect(def.service).toBe('acme_crm');
    expect(def.keywords).toEqual(expect.arrayContaining(['acme', 'crm', 'customer']));
    expect(def.actions.map((a) => [a.name, a.side_effect])).toEqual([
      ['create_contact', 'write'],
      ['list_contacts', 'read'],
      ['delete_contact', 'destructive'],
    ]);
    expect(def.actions[0]?.scopes).toEqual(['contacts', 'contacts.write']);
    const { oauth: _oauth, ...withoutOauth } = CRM;
    expect(customToolDef(withoutOauth).service).toBeNull();
  });

  it.each([
    [
      'Create a contact in the acme crm named "Ada Lovelace" with email ada@example.com',
      'create_contact',
      { name: 'Ada Lovelace', email: 'ada@example.com' },
    ],
    ['Add a CRM contact "Grace Hopper", company: Navy', 'create_contact', { name: 'Grace Hopper', company: 'Navy' }],
    ['List 5 contacts from the acme crm', 'list_contacts', { limit: 5 }],
    ['Show the customer contacts in acme crm, vip_only=true', 'list_contacts', { vip_only: true }],
    ['List the archived contacts in the acme crm', 'list_contacts', { status: 'archived' }],
    ['Remove the acme crm contact contact_id: c_42', 'delete_contact', { contact_id: 'c_42' }],
  ])('plans %s', (prompt, action, input) => {
    const outcome = plan(prompt);
    expect(outcome.ok && outcome.plan.steps).toEqual([{ tool: 'acme_crm', action, input }]);
  });

  it('mixes a custom tool with built-ins in one workflow', () => {
    const outcome = plan('List the contacts in acme crm then post them to #sales');
    expect(outcome.ok && outcome.plan.steps.map((s) => `${s.tool}.${s.action}`)).toEqual(['acme_crm.list_contacts', 'slack.post_message']);
    // The task's tool is the first one acting for a user: the CRM.
    expect(toolOf('List the contacts in acme crm then post them to #sales')).toBe('acme_crm');
  });

  it('does not take over prompts meant for built-ins', () => {
    expect(toolOf('Post "Deploy finished" to #eng')).toBe('slack');
    expect(toolOf('Echo "hi"')).toBe('text');
  });

  it('gives the executor what it needs to run an action, and nothing for an unknown one', () => {
    expect(customStep(CRM, 'delete_contact')).toEqual({
      base_url: 'https://crm.example.com/api',
      method: 'DELETE',
      path: '/contacts/{contact_id}',
      input_schema: CRM.actions[2]?.input_schema,
      service: 'acme_crm',
      scopes: ['contacts'],
    });
    expect(customStep(CRM, 'nope')).toBeUndefined();
  });

  it('reserves the names of built-in tools and services', () => {
    for (const name of ['github', 'slack', 'google_calendar', 'gmail', 'notion', 'http', 'text', 'data'])
      expect(RESERVED_TOOL_NAMES.has(name)).toBe(true);
    expect(RESERVED_TOOL_NAMES.has('acme_crm')).toBe(false);
  });
});
