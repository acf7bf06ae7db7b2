import { createHmac } from 'node:crypto';
import { hostAllowed } from '../common/host-patterns';
import { canonicalQuery, parseRawQuery, renderSignature, rfc3986, signaturesMatch } from './render-signature';

describe('render link signatures (CONTRACT.md, "Render links")', () => {
  it('percent-encodes as RFC 3986: unreserved kept, every other UTF-8 byte %XX upper-case', () => {
    expect(rfc3986("AZaz09-._~ !'()*/?&=+é")).toBe('AZaz09-._~%20%21%27%28%29%2A%2F%3F%26%3D%2B%C3%A9');
  });

  it('sorts by name then value, leaves out signature, and does not depend on the order given', () => {
    const a = canonicalQuery([
      ['width', '800'],
      ['url', 'https://example.com/a b'],
      ['hideSelectors', '["#b","#a"]'],
      ['signature', 'x'],
      ['a', '2'],
      ['a', '10'],
    ]);
    const b = canonicalQuery([
      ['a', '10'],
      ['hideSelectors', '["#b","#a"]'],
      ['url', 'https://example.com/a b'],
      ['a', '2'],
      ['width', '800'],
    ]);
    expect(a).toBe(b);
    expect(a).toBe('a=10&a=2&hideSelectors=%5B%22%23b%22%2C%22%23a%22%5D&url=https%3A%2F%2Fexample.com%2Fa%20b&width=800');
  });

  it('signs GET\\n<path>\\n<canonical> with HMAC-SHA256 keyed by the whole secret, lowercase hex', () => {
    const expected = createHmac('sha256', 'rks_secret').update('GET\n/v1/render/rk_x.png\nurl=https%3A%2F%2Fexample.com').digest('hex');
    expect(renderSignature('rks_secret', '/v1/render/rk_x.png', 'url=https%3A%2F%2Fexample.com')).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    expect(signaturesMatch(expected, expected)).toBe(true);
    expect(signaturesMatch(expected.toUpperCase(), expected)).toBe(false);
    expect(signaturesMatch('short', expected)).toBe(false);
  });

  it('parses raw queries keeping + as +, refusing malformed escapes', () => {
    expect(parseRawQuery('a=1+2&b=%20&c&=x')).toEqual([
      ['a', '1+2'],
      ['b', ' '],
      ['c', ''],
      ['', 'x'],
    ]);
    expect(parseRawQuery('a=%E0%A4%A')).toBeNull();
  });

  it('matches allowed hosts exactly or by one leading wildcard (subdomains, not the apex)', () => {
    expect(hostAllowed('example.com', [])).toBe(true);
    expect(hostAllowed('example.com', ['example.com'])).toBe(true);
    expect(hostAllowed('www.example.com', ['example.com'])).toBe(false);
    expect(hostAllowed('a.b.example.com', ['*.example.com'])).toBe(true);
    expect(hostAllowed('example.com', ['*.example.com'])).toBe(false);
    expect(hostAllowed('badexample.com', ['*.example.com'])).toBe(false);
  });
});
