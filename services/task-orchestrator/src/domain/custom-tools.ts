import { BUILT_IN_TOOLS, type ToolDef } from '@tes/catalog';
import { sideEffectOfAction, type StepRun, type ToolView } from '@tes/contracts';

/**
 * A registered custom tool as the planner sees it: a catalog entry like the built-ins. The
 * words of its name and of each action's name count as keywords ("acme_crm" → acme, crm).
 * It needs a user connection (its service is its own name) when it has an OAuth client.
 */
export function customToolDef(view: ToolView): ToolDef {
  const toolScopes = view.oauth?.scopes ?? [];
  return {
    name: view.name,
    description: view.description,
    service: view.oauth ? view.name : null,
    keywords: [...new Set([...nameWords(view.name), ...(view.keywords ?? []).map((k) => k.toLowerCase())])],
    actions: view.actions.map((a) => ({
      name: a.name,
      description: a.description,
      input: a.input_schema,
      output: { type: 'object' },
      scopes: [...new Set([...toolScopes, ...(a.scopes ?? [])])],
      side_effect: sideEffectOfAction(a),
      keywords: [...new Set([...nameWords(a.name), ...(a.keywords ?? []).map((k) => k.toLowerCase())])],
    })),
  };
}

/** The built-in catalog, then the account's custom tools (built-ins win ties: catalog order). */
export function catalogWith(custom: readonly ToolView[]): readonly ToolDef[] {
  return custom.length === 0 ? BUILT_IN_TOOLS : [...BUILT_IN_TOOLS, ...custom.map(customToolDef)];
}

/** What the executor needs to run a custom tool's action (it has no tool store); undefined for unknown actions. */
export function customStep(view: ToolView, action: string): NonNullable<StepRun['custom']> | undefined {
  const a = view.actions.find((x) => x.name === action);
  if (!a) return undefined;
  return {
    base_url: view.base_url,
    method: a.method,
    path: a.path,
    input_schema: a.input_schema,
    service: view.oauth ? view.name : null,
    scopes: [...new Set([...(view.oauth?.scopes ?? []), ...(a.scopes ?? [])])],
  };
}

function nameWords(name: string): string[] {
  return name.split('_').filter((w) => w.length > 1);
}
