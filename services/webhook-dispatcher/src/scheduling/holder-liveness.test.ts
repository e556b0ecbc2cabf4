import { memoryLogger, waitFor } from '@tes/testing';
import { GONE_AFTER_ROUNDS, HolderLiveness, claimsWithLiveness } from './holder-liveness.js';

const INTERVAL_MS = 200;

/** The beats as a replica's reads would see them, with a delay on this reader's own writes and reads. */
function beatStore(delay: { write: number; read: number }) {
  const docs = new Map<string, { _id: string; beat: number; stopped: boolean }>();
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  return {
    docs,
    delay,
    async beat(holder: string, beat: number, stopped = false) {
      await wait(delay.write);
      docs.set(holder, { _id: holder, beat, stopped });
    },
    async all() {
      await wait(delay.read);
      return [...docs.values()];
    },
  };
}

function liveness(store: ReturnType<typeof beatStore>) {
  const gone: string[] = [];
  const l = new HolderLiveness({ beats: store, holder: 'me', logger: memoryLogger().logger }, INTERVAL_MS);
  l.onGone((h) => gone.push(h));
  return { l, gone };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('holder liveness', () => {
  const running: HolderLiveness[] = [];
  afterEach(async () => {
    for (const l of running.splice(0)) await l.stop();
  });

  it('counts a holder gone after its beat stayed the same over the reader own on-time rounds, and never itself', async () => {
    const store = beatStore({ write: 0, read: 0 });
    store.docs.set('other', { _id: 'other', beat: 7, stopped: false });
    const { l, gone } = liveness(store);
    running.push(l);
    await l.start();
    expect(l.isGone('other')).toBe(false);
    await sleep(INTERVAL_MS * (GONE_AFTER_ROUNDS - 1));
    expect(l.isGone('other')).toBe(false);
    await waitFor(() => l.isGone('other'), { timeoutMs: 10_000, what: 'other counted gone' });
    expect(gone).toEqual(['other']);
    expect(l.isGone('me')).toBe(false);
    expect(l.isGone('never-seen')).toBe(false);
    // It beats again: alive again.
    store.docs.set('other', { _id: 'other', beat: 8, stopped: false });
    await waitFor(() => !l.isGone('other'), { timeoutMs: 10_000, what: 'other alive again' });
  });

  it('never counts a holder gone while its own rounds are late (its database slow or paused)', async () => {
    const store = beatStore({ write: 0, read: INTERVAL_MS * 1.2 });
    store.docs.set('other', { _id: 'other', beat: 7, stopped: false });
    const { l, gone } = liveness(store);
    running.push(l);
    await l.start();
    await sleep(INTERVAL_MS * (GONE_AFTER_ROUNDS * 4));
    expect(l.isGone('other')).toBe(false);
    expect(gone).toEqual([]);
    // On time again: the count starts from zero.
    store.delay.read = 0;
    await waitFor(() => gone.length > 0, { timeoutMs: 10_000, what: 'other counted gone' });
    expect(gone).toEqual(['other']);
  });

  it('counts a holder that marked itself stopped gone at the next round', async () => {
    const store = beatStore({ write: 0, read: 0 });
    store.docs.set('other', { _id: 'other', beat: 3, stopped: true });
    const { l } = liveness(store);
    running.push(l);
    await l.start();
    expect(l.isGone('other')).toBe(true);
    await l.stop();
    expect(store.docs.get('me')?.stopped).toBe(true);
  });

  it('takes no claim while its own beat cannot be written, and lets claims of a gone holder be taken over', async () => {
    const store = beatStore({ write: 0, read: 0 });
    const { l } = liveness(store);
    running.push(l);
    await l.start();
    const calls: { isGone?: (h: string) => boolean }[] = [];
    const claims = claimsWithLiveness(
      {
        acquire: async (_e, _a, _h, _l, options) => {
          calls.push(options);
          return { won: true, id: 'x', takeover: false };
        },
        recentOf: async () => [],
      },
      l,
    );
    expect(await claims.acquire('evt', 1, 'me', 60_000, {})).toMatchObject({ won: true });
    expect(calls[0]?.isGone).toBe(l.isGone);
    store.delay.write = INTERVAL_MS * GONE_AFTER_ROUNDS;
    await sleep(INTERVAL_MS * (GONE_AFTER_ROUNDS / 2 + 2));
    expect(await claims.acquire('evt', 2, 'me', 60_000, {})).toMatchObject({ won: false });
    expect(calls).toHaveLength(1);
    store.delay.write = 0;
  });
});
