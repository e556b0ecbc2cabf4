import { findAction } from '@tes/catalog';
import { compile, type StepRun } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startFakeVault } from '../../test-support/fake-vault.js';
import { startHarness, type Harness } from '../../test-support/harness.js';
import { DEFAULT_SETTINGS } from '../tool.js';
import { startFakeNotion, type FakeNotion, type NPage } from './fake.js';

type StepInput = Partial<StepRun> & Pick<StepRun, 'action' | 'input'>;

function schemaErrors(action: string, output: unknown) {
  const check = compile(findAction('notion', action)?.output ?? {});
  return check(output) ? null : check.errors;
}

/** Notion's search, page reading, appending and typed database filters against a fake Notion API. */
describe('notion actions with live keys', () => {
  let h: Harness;
  let notion: FakeNotion;

  beforeAll(async () => {
    h = await startHarness();
    await startFakeVault(h.broker, () => ({ status: 'ok', access_token: 'tok-valid' }));
    notion = await startFakeNotion();
  });
  afterAll(async () => {
    await notion?.close();
    await h?.close();
  });

  const live = (s: StepInput) =>
    runStep(
      h.step({ environment: 'live', tool: 'notion', ...s }),
      h.deps({ providerUrls: { ...DEFAULT_SETTINGS.providerUrls, notion: notion.url } }),
    );
  const since = (from: number) => notion.requests.slice(from);

  it('search: pages by title, most recently edited first; databases by their own title', async () => {
    await live({ action: 'create_page', input: { parent_id: 'db1', title: 'Board meeting March' } });
    await live({ action: 'create_page', input: { parent_id: 'db1', title: 'Board meeting April' } });
    const before = notion.requests.length;
    const res = await live({ action: 'search', input: { query: 'board meeting', limit: 5 } });
    expect(res).toMatchObject({
      outcome: 'complete',
      output: { count: 2, items: [{ title: 'Board meeting April', object: 'page' }, { title: 'Board meeting March' }] },
    });
    expect(schemaErrors('search', res.output)).toBeNull();
    const [req] = since(before);
    expect(`${req?.method} ${req?.path}`).toBe('POST /search');
    expect(req?.body).toEqual({
      query: 'board meeting',
      filter: { property: 'object', value: 'page' },
      sort: { direction: 'descending', timestamp: 'last_edited_time' },
      page_size: 5,
    });
    expect(req?.headers['idempotency-key']).toBeUndefined();
    const dbs = await live({ action: 'search', input: { query: 'road', kind: 'database' } });
    expect(dbs.output).toMatchObject({ count: 1, items: [{ id: 'db1', object: 'database', title: 'Roadmap' }] });
    expect(schemaErrors('search', dbs.output)).toBeNull();
  });

  it('append_to_page splits paragraphs on blank lines, cuts long ones at 2000 characters; get_page reads them back', async () => {
    const page = await live({ action: 'create_page', input: { parent_id: 'db1', title: 'Notes', content: 'First line' } });
    const id = String(page.output?.['id']);
    const long = 'x'.repeat(4500);
    const before = notion.requests.length;
    const res = await live({ action: 'append_to_page', input: { page_id: id, content: `Agenda\n\n  Budget review  \n\n\n${long}` } });
    expect(res).toMatchObject({ outcome: 'complete', output: { page_id: id, appended: 3 } });
    expect(schemaErrors('append_to_page', res.output)).toBeNull();
    const [patch] = since(before);
    expect(`${patch?.method} ${patch?.path}`).toBe(`PATCH /blocks/${id}/children`);
    expect(patch?.headers['idempotency-key']).toMatch(/^task_.+:0$/);
    const children = (patch?.body as { children: { type: string; paragraph: { rich_text: { text: { content: string } }[] } }[] }).children;
    expect(children.map((c) => c.type)).toEqual(['paragraph', 'paragraph', 'paragraph']);
    expect(children[1]?.paragraph.rich_text).toEqual([{ type: 'text', text: { content: 'Budget review' } }]);
    expect(children[2]?.paragraph.rich_text.map((t) => t.text.content.length)).toEqual([2000, 2000, 500]);

    const read = await live({ action: 'get_page', input: { page_id: id } });
    expect(read).toMatchObject({ outcome: 'complete', output: { id, title: 'Notes', text: `First line\nAgenda\nBudget review\n${long}` } });
    expect(schemaErrors('get_page', read.output)).toBeNull();
    expect(since(before + 1).map((r) => `${r.method} ${r.path}?${r.query.toString()}`)).toEqual([
      `GET /pages/${id}?`,
      `GET /blocks/${id}/children?page_size=100`,
    ]);
  });

  it('more than 100 paragraphs go in several appends; get_page follows the block cursor', async () => {
    const page = await live({ action: 'create_page', input: { parent_id: 'p0', parent_type: 'page', title: 'Log' } });
    const id = String(page.output?.['id']);
    const before = notion.requests.length;
    const content = Array.from({ length: 130 }, (_, i) => `line ${i + 1}`).join('\n\n');
    const res = await live({ action: 'append_to_page', input: { page_id: id, content } });
    expect(res.output).toEqual({ page_id: id, appended: 130 });
    expect(since(before).map((r) => (r.body as { children: unknown[] }).children.length)).toEqual([100, 30]);
    expect(since(before).map((r) => r.headers['idempotency-key'])).toEqual([expect.stringMatching(/:0$/), expect.stringMatching(/:0#1$/)]);
    const read = await live({ action: 'get_page', input: { page_id: id } });
    const text = String(read.output?.['text']).split('\n');
    expect([text.length, text[0], text[129]]).toEqual([130, 'line 1', 'line 130']);
    expect(
      notion.requests.filter((r) => r.path === `/blocks/${id}/children` && r.method === 'GET').map((r) => r.query.get('start_cursor')),
    ).toEqual([null, '100']);
  });

  it('get_page renders list items, to-dos and headings as text lines', async () => {
    const page = await live({ action: 'create_page', input: { parent_id: 'db1', title: 'Checklist' } });
    const id = String(page.output?.['id']);
    const rt = (s: string) => ({ rich_text: [{ type: 'text', text: { content: s }, plain_text: s }] });
    notion.blocks.set(id, [
      { object: 'block', type: 'heading_2', heading_2: rt('Launch') },
      { object: 'block', type: 'to_do', to_do: { ...rt('Write notes'), checked: true } },
      { object: 'block', type: 'bulleted_list_item', bulleted_list_item: rt('Ping #eng') },
      { object: 'block', type: 'divider', divider: {} },
    ]);
    const read = await live({ action: 'get_page', input: { page_id: id } });
    expect(read.output?.['text']).toBe('Launch\n[x] Write notes\n- Ping #eng');
  });

  describe('query_database with a filter, typed by the database’s properties', () => {
    const seed = (title: string, props: NPage['properties']) => {
      const n = notion.pages.length + 1;
      const id = `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`;
      notion.pages.push({
        object: 'page',
        id,
        url: `https://www.notion.so/${id}`,
        created_time: new Date(Date.UTC(2025, 1, 1, 0, n)).toISOString(),
        last_edited_time: new Date(Date.UTC(2025, 1, 1, 0, n)).toISOString(),
        parent: { type: 'database_id', database_id: 'tasks' },
        properties: { Name: { id: 'title', type: 'title', title: [{ plain_text: title }] }, ...props },
      });
    };
    beforeAll(() => {
      seed('Ship v2', { Status: { type: 'status', status: { name: 'Done' } }, Done: { type: 'checkbox', checkbox: true } });
      seed('Write docs', { Status: { type: 'status', status: { name: 'In progress' } }, Done: { type: 'checkbox', checkbox: false } });
      seed('Ship v3', {
        Status: { type: 'status', status: { name: 'In progress' } },
        Tags: { type: 'multi_select', multi_select: [{ name: 'release' }] },
      });
    });

    it.each([
      [{ property: 'status', equals: 'Done' }, { property: 'Status', status: { equals: 'Done' } }, ['Ship v2']],
      [{ property: 'Done', checkbox: false }, { property: 'Done', checkbox: { equals: false } }, ['Ship v3', 'Write docs']],
      [{ property: 'Tags', equals: 'release' }, { property: 'Tags', multi_select: { contains: 'release' } }, ['Ship v3']],
      [{ property: 'Name', contains: 'docs' }, { property: 'Name', title: { contains: 'docs' } }, ['Write docs']],
    ])('%j becomes the Notion filter %j', async (filter, wire, titles) => {
      const before = notion.requests.length;
      const res = await live({ action: 'query_database', input: { database_id: 'tasks', filter } });
      expect(res.outcome).toBe('complete');
      expect((res.output?.['items'] as { title: string }[]).map((p) => p.title)).toEqual(titles);
      expect(schemaErrors('query_database', res.output)).toBeNull();
      const [schema, query] = since(before);
      expect(`${schema?.method} ${schema?.path}`).toBe('GET /databases/tasks');
      expect((query?.body as { filter: unknown }).filter).toEqual(wire);
    });

    it('with filter_text too: both conditions, joined with and', async () => {
      const before = notion.requests.length;
      const res = await live({
        action: 'query_database',
        input: { database_id: 'tasks', filter_text: 'ship', filter: { property: 'Status', equals: 'In progress' } },
      });
      expect(res.output).toMatchObject({ count: 1, items: [{ title: 'Ship v3' }] });
      expect((since(before)[1]?.body as { filter: unknown }).filter).toEqual({
        and: [
          { property: 'title', title: { contains: 'ship' } },
          { property: 'Status', status: { equals: 'In progress' } },
        ],
      });
    });

    it('without a filter, the database is not read first', async () => {
      const before = notion.requests.length;
      await live({ action: 'query_database', input: { database_id: 'tasks' } });
      expect(since(before).map((r) => r.path)).toEqual(['/databases/tasks/query']);
    });

    it.each([
      [{ property: 'Owner', equals: 'bob' }, /no property "Owner"; it has "Name", "Status"/, /Filter on one of the database’s properties/],
      [{ property: 'Done', contains: 'yes' }, /"Done" is a checkbox property/, /checked or not/],
      [{ property: 'Estimate', equals: 'soon' }, /"Estimate" is a number property/, /Compare "Estimate" with a value/],
    ])('%j fails before querying, saying how to filter', async (filter, message, suggestion) => {
      const before = notion.requests.length;
      const res = await live({ action: 'query_database', input: { database_id: 'tasks', filter } });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', recoverable: false } });
      expect(res.error?.message).toMatch(message);
      expect(res.error?.suggestion).toMatch(suggestion);
      expect(since(before).map((r) => r.path)).toEqual(['/databases/tasks']);
    });
  });

  it('a page not shared with the integration: step_failed suggesting to share it', async () => {
    const res = await live({ action: 'get_page', input: { page_id: 'not-shared' } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', tool: 'notion', recoverable: false } });
    expect(res.error?.message).toMatch(/Notion has no page shared with the integration \(Could not find page with ID: not-shared/);
    expect(res.error?.suggestion).toMatch(/share the page or database with the integration/);
    const append = await live({ action: 'append_to_page', input: { page_id: 'not-shared', content: 'x' } });
    expect(append.error?.code).toBe('step_failed');
  });

  it('a capability missing (403 restricted_resource): permission_denied, recoverable', async () => {
    notion.fail({ kind: 'insufficient_scope' }, 1, /^\/search$/);
    const res = await live({ action: 'search', input: { query: 'x' } });
    expect(res).toMatchObject({ outcome: 'failed', error: { code: 'permission_denied', recoverable: true } });
    expect(res.error?.suggestion).toMatch(/share it with the integration/);
  });
});

describe('notion actions with test keys (sandbox)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.close());

  const run = (s: StepInput) => runStep(h.step({ tool: 'notion', user_id: 'u_notion', ...s }), h.deps());

  it('search finds pages created by create_page (per user); databases by the pages made in them', async () => {
    await run({ action: 'create_page', input: { parent_id: 'roadmap', title: 'Q3 goals' } });
    await run({ action: 'create_page', input: { parent_id: 'roadmap', title: 'Q4 goals' } });
    const found = await run({ action: 'search', input: { query: 'q3' } });
    expect(found.output).toMatchObject({ count: 1, items: [{ title: 'Q3 goals', object: 'page' }] });
    expect(schemaErrors('search', found.output)).toBeNull();
    const dbs = await run({ action: 'search', input: { query: 'road', kind: 'database' } });
    expect(dbs.output).toMatchObject({ count: 1, items: [{ id: 'roadmap', object: 'database' }] });
    expect(schemaErrors('search', dbs.output)).toBeNull();
    const other = await runStep(h.step({ tool: 'notion', user_id: 'u_else', action: 'search', input: { query: 'goals' } }), h.deps());
    expect(other.output).toEqual({ items: [], count: 0 });
    const filtered = await run({
      action: 'query_database',
      input: { database_id: 'roadmap', filter: { property: 'Name', contains: 'q4' } },
    });
    expect(filtered.output).toMatchObject({ count: 1, items: [{ title: 'Q4 goals' }] });
  });

  it('append_to_page then get_page shows the text; an append re-run is applied once', async () => {
    const page = await run({ action: 'create_page', input: { parent_id: 'roadmap', title: 'Minutes', content: 'Opened at 10' } });
    const id = String(page.output?.['id']);
    const step = h.step({
      tool: 'notion',
      user_id: 'u_notion',
      action: 'append_to_page',
      input: { page_id: id, content: 'Budget agreed\n\nNext: hiring' },
    });
    const appended = await runStep(step, h.deps());
    expect(appended.output).toEqual({ page_id: id, appended: 2 });
    expect(schemaErrors('append_to_page', appended.output)).toBeNull();
    await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
    await runStep(step, h.deps());
    await run({ action: 'append_to_page', input: { page_id: id.replaceAll('-', ''), content: 'Closed at 11' } });
    const read = await run({ action: 'get_page', input: { page_id: id } });
    expect(read.output).toEqual({
      id,
      title: 'Minutes',
      url: page.output?.['url'],
      text: 'Opened at 10\nBudget agreed\nNext: hiring\nClosed at 11',
    });
    expect(schemaErrors('get_page', read.output)).toBeNull();
  });
});
