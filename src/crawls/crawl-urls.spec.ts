import { CrawlUrlRules, normaliseUrl } from './crawl-urls';

describe('normaliseUrl (CONTRACT.md, "Crawls": one form per page)', () => {
  it.each([
    ['http://Example.COM:80/a#top', 'http://example.com/a'],
    ['https://example.com:443/a?', 'https://example.com/a'],
    ['https://EXAMPLE.com/a/../b/./c', 'https://example.com/b/c'],
    ['https://example.com:8443/a?x=1#f', 'https://example.com:8443/a?x=1'],
    ['https://example.com', 'https://example.com/'],
  ])('%s → %s', (raw, normalised) => {
    expect(normaliseUrl(raw)).toBe(normalised);
  });

  it('resolves a relative link against the page it is on', () => {
    expect(normaliseUrl('../x?q=1#a', 'https://example.com/a/b/c')).toBe('https://example.com/a/x?q=1');
  });

  it.each(['mailto:ada@example.com', 'javascript:alert(1)', 'ftp://example.com/x', 'https://user:pw@example.com/', 'not a url'])(
    'refuses %s',
    (raw) => {
      expect(normaliseUrl(raw)).toBeNull();
    },
  );

  it('the same page written several ways is one URL', () => {
    const forms = ['http://SITE.test:80/p', 'http://site.test/p#x', 'http://site.test/p?', 'http://site.test/q/../p'];
    expect(new Set(forms.map((f) => normaliseUrl(f))).size).toBe(1);
  });
});

describe('CrawlUrlRules', () => {
  it('scope host keeps the start host only', () => {
    const rules = new CrawlUrlRules('https://www.example.com/', 'host', [], []);
    expect(rules.keeps('https://www.example.com/a')).toBe(true);
    expect(rules.keeps('https://docs.example.com/a')).toBe(false);
    expect(rules.keeps('https://example.org/a')).toBe(false);
  });

  it('scope domain keeps the hosts below the start host without www', () => {
    const rules = new CrawlUrlRules('https://www.example.com/', 'domain', [], []);
    expect(rules.keeps('https://example.com/a')).toBe(true);
    expect(rules.keeps('https://docs.example.com/a')).toBe(true);
    expect(rules.keeps('https://badexample.com/a')).toBe(false);
    expect(rules.keeps('https://example.com.evil.test/a')).toBe(false);
  });

  it('include and exclude match the path and query', () => {
    const rules = new CrawlUrlRules('https://example.com/', 'host', ['/docs/*', '/'], ['*?print=1', '/docs/private*']);
    expect(rules.keeps('https://example.com/')).toBe(true);
    expect(rules.keeps('https://example.com/docs/a')).toBe(true);
    expect(rules.keeps('https://example.com/blog/a')).toBe(false);
    expect(rules.keeps('https://example.com/docs/a?print=1')).toBe(false);
    expect(rules.keeps('https://example.com/docs/private/x')).toBe(false);
  });
});
