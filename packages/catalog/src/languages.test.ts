import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BUILT_IN_LANGUAGES } from './languages.js';
import { BUILT_IN_HINTS, BUILT_IN_TOOLS } from './index.js';

const TOOLS_DIR = join(__dirname, 'tools');

describe('the tools’ language data', () => {
  it('lists every language file of every tool folder', () => {
    for (const tool of BUILT_IN_TOOLS) {
      const files = readdirSync(join(TOOLS_DIR, tool.name, 'language')).filter((f) => f.endsWith('.json'));
      expect(Object.keys(BUILT_IN_LANGUAGES[tool.name] ?? {}).sort()).toEqual(files.map((f) => f.replace(/\.json$/, '')).sort());
    }
  });

  it('holds lowercase phrases mapped onto non-empty canonical words', () => {
    for (const [tool, languages] of Object.entries(BUILT_IN_LANGUAGES)) {
      for (const [lang, { phrases }] of Object.entries(languages)) {
        for (const [phrase, canonical] of Object.entries(phrases)) {
          const where = `${tool}/${lang}: "${phrase}"`;
          expect([where, phrase]).toEqual([where, phrase.toLowerCase().trim()]);
          expect([where, canonical.trim().length > 0]).toEqual([where, true]);
        }
      }
    }
  });

  it('has an English file for every tool with hints', () => {
    for (const tool of Object.keys(BUILT_IN_HINTS)) expect(BUILT_IN_LANGUAGES[tool]?.['en']).toBeDefined();
  });
});
