import { globToRegExp } from './blockers';

describe('globToRegExp (blockUrls)', () => {
  it.each([
    ['*.png', 'http://127.0.0.1:8080/a/b.png', true],
    ['*.png', 'http://127.0.0.1:8080/a/b.png?x=1', false],
    ['*/ads/*', 'https://example.com/ads/banner.js', true],
    ['*://cdn.example.com/*', 'https://cdn.example.com/lib.js', true],
    ['*://cdn.example.com/*', 'https://cdn.example.com.evil.test/lib.js', false],
    ['http://a.test/x?y=(1)', 'http://a.test/x?y=(1)', true],
    ['http://a.test/x.js', 'http://a.test/xyjs', false],
    ['*', 'anything at all', true],
  ])('%s against %s: %s', (glob, url, matches) => {
    expect(globToRegExp(glob).test(url)).toBe(matches);
  });
});
