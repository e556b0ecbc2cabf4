import { ConfigError, parseEnv } from './index.js';

const schema = {
  type: 'object',
  properties: {
    PORT: { type: 'integer', minimum: 1, maximum: 65535, default: 8443 },
    MONGO_URL: { type: 'string', pattern: '^mongodb://' },
    DEBUG: { type: 'boolean', default: false },
  },
  required: ['MONGO_URL'],
} as const;

describe('parseEnv', () => {
  it('coerces types and applies defaults', () => {
    const cfg = parseEnv<{ PORT: number; MONGO_URL: string; DEBUG: boolean }>(schema, { MONGO_URL: 'mongodb://x', DEBUG: 'true' });
    expect(cfg).toEqual({ PORT: 8443, MONGO_URL: 'mongodb://x', DEBUG: true });
  });

  it('names every bad variable at once', () => {
    let caught: unknown;
    try {
      parseEnv(schema, { PORT: 'abc' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const msg = (caught as ConfigError).message;
    expect(msg).toContain('PORT');
    expect(msg).toContain('MONGO_URL');
  });

  it('ignores variables it was not asked about', () => {
    const cfg = parseEnv(schema, { MONGO_URL: 'mongodb://x', OTHER: 'y' });
    expect(cfg).not.toHaveProperty('OTHER');
  });

  describe('patternProperties', () => {
    const dynamic = {
      ...schema,
      patternProperties: { '^[A-Z]+_CLIENT_ID$': { type: 'string', maxLength: 8 } },
    } as const;

    it('reads every variable whose name matches, an empty one included', () => {
      const cfg = parseEnv(dynamic, { MONGO_URL: 'mongodb://x', GITHUB_CLIENT_ID: 'abc', SLACK_CLIENT_ID: '', OTHER: 'y' });
      expect(cfg).toEqual({ PORT: 8443, MONGO_URL: 'mongodb://x', DEBUG: false, GITHUB_CLIENT_ID: 'abc', SLACK_CLIENT_ID: '' });
    });

    it('validates them against their schema', () => {
      expect(() => parseEnv(dynamic, { MONGO_URL: 'mongodb://x', GITHUB_CLIENT_ID: 'far-too-long' })).toThrow(/GITHUB_CLIENT_ID/);
    });
  });
});
