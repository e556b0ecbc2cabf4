import { parseCookies, serializeCookie } from './cookies.js';

describe('cookies', () => {
  it('parses a Cookie header, decoding values and keeping undecodable ones as sent', () => {
    expect(parseCookies('a=1; __Host-tes_session=x.y.z; b=%41; c=%E0%A4%A; d')).toEqual({
      a: '1',
      '__Host-tes_session': 'x.y.z',
      b: 'A',
      c: '%E0%A4%A',
    });
    expect(parseCookies(undefined)).toEqual({});
  });

  it('serializes HttpOnly cookies, Secure only when asked', () => {
    expect(serializeCookie('n', 'a b', { maxAgeS: 60, path: '/', sameSite: 'Strict', secure: true })).toBe(
      'n=a%20b; Max-Age=60; Path=/; HttpOnly; Secure; SameSite=Strict',
    );
    expect(serializeCookie('n', '', { maxAgeS: 0, path: '/oauth/callback', sameSite: 'Lax', secure: false })).toBe(
      'n=; Max-Age=0; Path=/oauth/callback; HttpOnly; SameSite=Lax',
    );
  });
});
