import { readFileSync, readdirSync } from 'node:fs';
import { uniqueName } from './index.js';
import { startStack } from './stack.js';

/** Processes of this user whose environment carries `marker` (the stack's services get it through `env`). */
function processesWith(marker: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(marker);
      } catch {
        return false; // gone meanwhile, or not ours
      }
    })
    .map(Number);
}

describe('startStack', () => {
  it('stops the services that did start when another one cannot, so none outlives the test', async () => {
    const marker = `TES_STACK_MARKER=${uniqueName('orphan')}`;
    const [key, value] = marker.split('=') as [string, string];
    await expect(startStack({ env: { '*': { [key]: value }, gateway: { PORT: 'not-a-port' } } })).rejects.toThrow(/gateway/);
    expect(processesWith(marker)).toEqual([]);
  });
});
