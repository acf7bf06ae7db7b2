import { inspect } from 'node:util';
import { loadConfig } from './app-config';
import { parseEgressProxies, UpstreamProxy } from './egress-proxies';

describe('EGRESS_PROXIES (CONTRACT.md, "Capture options, second set": proxy)', () => {
  it('unset or empty: no upstream proxy', () => {
    expect(parseEgressProxies(undefined)).toEqual({});
    expect(parseEgressProxies('  ')).toEqual({});
    expect(loadConfig({}).egressProxies).toEqual({});
  });

  it('parses ids to host, port and the Proxy-Authorization value (user and password percent-decoded)', () => {
    const proxies = parseEgressProxies(
      JSON.stringify({ eu: 'http://alice:p%40ss@proxy.example:3128', plain: 'http://10.0.0.5', v6: 'http://[::1]:8080/' }),
    ) as Record<string, UpstreamProxy>;
    expect(Object.keys(proxies)).toEqual(['eu', 'plain', 'v6']);
    expect(proxies.eu).toMatchObject({ id: 'eu', host: 'proxy.example', port: 3128 });
    expect(proxies.eu.authorization).toBe(`Basic ${Buffer.from('alice:p@ss').toString('base64')}`);
    expect(proxies.plain).toMatchObject({ host: '10.0.0.5', port: 80, authorization: null });
    expect(proxies.v6).toMatchObject({ host: '[::1]', port: 8080 });
    expect(String(proxies.v6)).toBe('[::1]:8080');
  });

  it('never shows the credentials when printed, logged or serialised', () => {
    const proxies = parseEgressProxies('{"eu":"http://alice:hunter2@proxy.example:3128"}') as Record<string, UpstreamProxy>;
    for (const shown of [String(proxies.eu), JSON.stringify(proxies), inspect(proxies, { depth: 5 })]) {
      expect(shown).toContain('proxy.example:3128');
      expect(shown).not.toMatch(/hunter2|alice|Basic/);
    }
  });

  it.each([
    ['not JSON', '{eu:', /JSON object/],
    ['an array', '["http://a:1"]', /JSON object/],
    ['a bad id', '{"e u":"http://a:1"}', /id "e u" must be/],
    ['a non-string URL', '{"eu":3128}', /eu: must be a URL/],
    ['https', '{"eu":"https://proxy.example:443"}', /eu: must be a URL/],
    ['socks', '{"eu":"socks5://proxy.example:1080"}', /eu: must be a URL/],
    ['a path', '{"eu":"http://proxy.example:3128/x"}', /eu: must be a URL/],
    ['not a URL', '{"eu":"proxy.example:3128"}', /eu: must be a URL/],
  ])('refuses %s', (_what, text, problem) => {
    expect(parseEgressProxies(text)).toMatch(problem);
  });

  it('a malformed value stops the service at start, naming the entry without echoing its URL', () => {
    expect(() => loadConfig({ EGRESS_PROXIES: '{"eu":"https://alice:hunter2@proxy.example"}' })).toThrow(
      /EGRESS_PROXIES: eu: must be a URL/,
    );
    try {
      loadConfig({ EGRESS_PROXIES: '{"eu":"https://alice:hunter2@proxy.example"}' });
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
    expect(Object.keys(loadConfig({ EGRESS_PROXIES: '{"eu":"http://proxy.example:3128"}' }).egressProxies)).toEqual(['eu']);
  });
});
