import { maskText, maskValue } from './redact.js';

/** What the task page masks in a prompt and in step inputs before it shows them. */
describe('maskText / maskValue', () => {
  it('masks credentials written in a prompt, keeping the rest readable', () => {
    const prompt =
      'Fetch https://bob:hunter2@api.example.com/v1/items?limit=5&api_key=AKIA123456 with header Authorization: Bearer abcdef123456789 ' +
      'and header X-Api-Token: tok_live_9988 then post to #eng (token sk-abcdefghijklmnopqrstuv, gh ghp_abcdefghijklmnopqrstuvwxyz0123)';
    const out = maskText(prompt);
    for (const secret of ['hunter2', 'AKIA123456', 'abcdef123456789', 'tok_live_9988', 'sk-abcdefghijklmnopqrstuv', 'ghp_abcdefghij']) {
      expect([secret, out.includes(secret)]).toEqual([secret, false]);
    }
    expect(out).toContain('https://[redacted]@api.example.com/v1/items?limit=5&api_key=[redacted]');
    expect(out).toContain('Authorization: [redacted]');
    expect(out).toContain('X-Api-Token: [redacted]');
    expect(out).toContain('then post to #eng');
  });

  it('leaves ordinary text and URLs alone', () => {
    const text = 'List the open issues in acme/api then post them to #eng; fetch https://example.com/a?page=2&postcode=75001';
    expect(maskText(text)).toBe(text);
  });

  it('masks secret-named fields at any depth and credential-looking values under any name', () => {
    const input = {
      url: 'https://api.example.com/data?token=abc123',
      headers: { 'X-Api-Key': 'k-123', Authorization: 'Basic dXNlcjpwYXNz', Accept: 'application/json' },
      json: { nested: [{ password: 'p4ss', note: 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_part' }], client_secret: '' },
      channel: '#eng',
      author: 'octocat',
      max_tokens: 5,
    };
    expect(maskValue(input)).toEqual({
      url: 'https://api.example.com/data?token=[redacted]',
      headers: { 'X-Api-Key': '[redacted]', Authorization: '[redacted]', Accept: 'application/json' },
      json: { nested: [{ password: '[redacted]', note: '[redacted]' }], client_secret: '' },
      channel: '#eng',
      author: 'octocat',
      max_tokens: 5,
    });
  });
});
