import { waitForUrlMatcher } from './run-steps';

describe('waitForUrlMatcher (CONTRACT.md "Browser session runs": waitForUrl, a glob or exact URL)', () => {
  it.each([
    // Exact URLs, compared as parsed URLs (as Playwright compared them).
    ['https://app.example.com/dashboard', 'https://app.example.com/dashboard', true],
    ['https://app.example.com/dashboard', 'https://app.example.com/dashboard/', false],
    ['https://app.example.com/dashboard', 'https://app.example.com/dashboard?tab=1', false],
    ['HTTPS://App.Example.com', 'https://app.example.com/', true],
    ['https://app.example.com:443/a', 'https://app.example.com/a', true],
    ['http://a.test/x?y=(1)', 'http://a.test/x?y=(1)', true],
    // The documented globs.
    ['**/dashboard', 'https://app.example.com/dashboard', true],
    ['**/dashboard', 'https://app.example.com/dashboard/x', false],
    ['**/welcome*', 'http://127.0.0.1:3000/welcome?user=ada', true],
    ['**/welcome?*', 'http://127.0.0.1:3000/welcome?user=ada', true],
    ['**/welcome?*', 'http://127.0.0.1:3000/welcome', false],
    ['https://App.Example.com/*', 'https://app.example.com/a/b', true],
    ['https://app.example.com:443/*', 'https://app.example.com/a', true],
    ['*://*.example.com/*', 'https://cdn.example.com/lib.js', true],
    ['https://app.example.com/*', 'https://app.example.com.evil.test/', false],
    // `?`, `{`, `,` and `\` are themselves.
    ['**/a?b', 'https://x.test/aXb', false],
    ['**/{a,b}', 'https://x.test/a', false],
    ['**/{a,b}', 'https://x.test/b', false],
    ['**/%7Ba,b%7D', 'https://x.test/{a,b}', true],
  ])('%s against %s: %s', (pattern, url, matches) => {
    expect(waitForUrlMatcher(pattern)(new URL(url))).toBe(matches);
  });

  it('answers a hostile glob against a long URL (no backtracking)', () => {
    const matches = waitForUrlMatcher(`**${'a**'.repeat(30)}Z`);
    expect(matches(new URL(`http://127.0.0.1/${'a'.repeat(200_000)}`))).toBe(false);
    expect(matches(new URL(`http://127.0.0.1/${'a'.repeat(40)}Z`))).toBe(true);
  });
});
