import { startHarness, type Harness } from '../test/harness.js';

/**
 * Issue 20, finding 6: 200 GETs of one auth_url stored 200 authorization attempts in 4 s. The
 * public pages are now limited per client address (PUBLIC_RATE_LIMIT_PER_MINUTE) before any
 * route runs: over the limit, a 429 page with Retry-After, and nothing stored.
 */
describe('public pages rate limit', () => {
  let h: Harness;
  const LIMIT = 20;

  beforeAll(async () => {
    h = await startHarness({ env: { PUBLIC_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  it('answers 429 after the limit to 200 rapid GETs of one auth_url, and stores no more than the limit', async () => {
    const reply = await h.credential({ user_id: 'u-flood', scopes: ['repo'] });
    const url = reply.auth_url as string;
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          // A client naming another address is not believed (no trusted proxy is configured).
          fetch(url, { redirect: 'manual', headers: { 'x-forwarded-for': `198.51.100.${batch}` } }),
        ),
      );
      for (const a of answers) {
        statuses.push(a.status);
        if (a.status === 429) refused ??= a;
        else await a.arrayBuffer();
      }
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(200 - LIMIT);
    expect(statuses.filter((s) => s !== 429).every((s) => s < 400)).toBe(true);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused?.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await refused?.text()).toContain('Too many requests');
    expect(await h.mongo.collection('auth_attempts').countDocuments({})).toBeLessThanOrEqual(LIMIT);
    // Every public page shares the limit: the settings page is refused too.
    expect((await fetch(`${h.baseUrl}/settings?token=x`)).status).toBe(429);
  }, 60_000);
});
