import { ensureIndexes } from '@tes/store';
import { startHarness, type Harness } from '../test-support/harness.js';
import { StepClaimRepository } from '../store/step-claim.repository.js';
import { runStep } from './run-step.use-case.js';

/** A step never runs twice at the same time, even when two deliveries of it arrive together. */
describe('step claims (real database)', () => {
  let h: Harness;
  let claims: StepClaimRepository;

  beforeAll(async () => {
    h = await startHarness();
    claims = new StepClaimRepository(h.mongo);
    await ensureIndexes(h.mongo);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('runs a step once when two deliveries race: the loser answers nothing', async () => {
    const step = h.step({ tool: 'github', action: 'create_issue', input: { owner: 'claims', repo: 'r', title: 'Once only' } });
    const [a, b] = await Promise.all([runStep(step, { ...h.deps(), claims }), runStep(step, { ...h.deps(), claims })]);
    const answered = [a, b].filter((r) => r !== undefined);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    // Whoever answers gives the one recorded result; the sandbox holds one issue.
    const again = await runStep(step, { ...h.deps(), claims });
    for (const r of answered) expect(r?.output).toEqual(again?.output);
    const list = await runStep(h.step({ tool: 'github', action: 'list_issues', input: { owner: 'claims', repo: 'r' } }), h.deps());
    expect((list.output?.['items'] as unknown[]).length).toBe(1);
  });

  it('refuses a live claim and takes over one whose lease ran out', async () => {
    const key = `task_claimtest:${Date.now()}`;
    const first = await claims.acquire(key, 60_000);
    expect(first).toBeDefined();
    expect(await claims.acquire(key, 60_000)).toBeUndefined();
    const expired = `task_claimexp:${Date.now()}`;
    expect(await claims.acquire(expired, 1, Date.now() - 1000)).toBeDefined();
    const takeover = await claims.acquire(expired, 60_000);
    expect(takeover?.id).toBe(`${expired}#1`);
  });

  it("ignores a slow holder's release after a takeover: a duplicate delivery does not run the step beside the new holder", async () => {
    const step = h.step({ tool: 'github', action: 'create_issue', input: { owner: 'claims-slow', repo: 'r', title: 'Once' } });
    const key = step.idempotency_key;
    const slow = await claims.claimFirst(key, 1, Date.now() - 1000); // its lease is over: presumed dead
    const takeover = await claims.acquire(key, 60_000);
    expect(takeover?.id).toBe(`${key}#1`);
    await claims.release(slow!); // the slow holder was alive after all, and gives its claim back
    expect(await runStep(step, { ...h.deps(), claims })).toBeUndefined();
    const list = await runStep(h.step({ tool: 'github', action: 'list_issues', input: { owner: 'claims-slow', repo: 'r' } }), h.deps());
    expect(list.output?.['items']).toEqual([]);
  });

  it('claims generation 0 only once, so only a first dispatch skips the reads', async () => {
    const key = `task_first:${Date.now()}`;
    expect((await claims.claimFirst(key, 60_000))?.id).toBe(`${key}#0`);
    expect(await claims.claimFirst(key, 60_000)).toBeUndefined();
  });

  it('gives the claim back after needs_authorization or a release, so the next dispatch runs at once', async () => {
    const key = `task_release:${Date.now()}`;
    const c = await claims.acquire(key, 60_000);
    expect(c).toBeDefined();
    await claims.release(c!);
    expect(await claims.acquire(key, 60_000)).toBeDefined();
  });
});
