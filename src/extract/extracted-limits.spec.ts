import { EXTRACT_CAPS } from '../results/extracted';
import { cutChars, cutUtf8, limitPageContent } from './extracted-limits';

/** What a page can answer when it changes the extractor's functions: anything, of any size. */
describe('limitPageContent (CONTRACT.md "Tenancy": limits applied by the service after reading)', () => {
  it('metadata: at most 200 openGraph + twitter entries (openGraph first), each string at most 2,048 characters', () => {
    const openGraph = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`p${i}`, `v${i}`]));
    openGraph.p0 = 'x'.repeat(100_000);
    const twitter = { card: 'summary', ['k'.repeat(5_000)]: 'y' };
    const { metadata } = limitPageContent(
      { metadata: { title: 't'.repeat(100_000), description: 7, lang: { a: 1 }, openGraph, twitter } },
      ['metadata'],
    );
    expect(Object.keys(metadata!.openGraph)).toHaveLength(200);
    expect(Object.keys(metadata!.openGraph)[199]).toBe('p199');
    expect(metadata!.openGraph.p0).toHaveLength(2_048);
    expect(metadata!.twitter).toEqual({});
    expect(metadata!.title).toHaveLength(2_048);
    expect(metadata).toMatchObject({ description: null, lang: null, canonicalUrl: null, image: null, favicon: null });

    const few = limitPageContent({ metadata: { openGraph: { a: '1', b: 2, c: null }, twitter } }, ['metadata']).metadata!;
    expect(few.openGraph).toEqual({ a: '1' });
    expect(Object.keys(few.twitter)).toEqual(['card', 'k'.repeat(2_048)]);
  });

  it('metadata: a key __proto__ stays an ordinary entry; lone surrogates become U+FFFD; pairs are never split', () => {
    const raw = JSON.parse('{"metadata":{"title":"a\\ud800b","openGraph":{"__proto__":"x","ok":"y"},"twitter":[]}}');
    const metadata = limitPageContent(raw, ['metadata']).metadata!;
    expect(Object.getPrototypeOf(metadata.openGraph)).toBe(Object.prototype);
    expect(Object.keys(metadata.openGraph)).toEqual(['__proto__', 'ok']);
    expect(metadata.title).toBe('a\ufffdb');
    expect(metadata.twitter).toEqual({});
    const emoji = limitPageContent({ metadata: { title: `${'a'.repeat(2_047)}😀` } }, ['metadata']).metadata!.title!;
    expect(emoji).toBe('a'.repeat(2_047));
  });

  it('texts: cut at their caps in bytes of UTF-8, truncated when cut, whatever the page said', () => {
    const big = 'é'.repeat(EXTRACT_CAPS.text); // 2 bytes each: twice the cap
    const out = limitPageContent(
      {
        text: { content: big, truncated: false },
        markdown: { content: 'short', truncated: false },
        html: { content: 42, truncated: false },
      },
      ['text', 'markdown', 'html'],
    );
    expect(Buffer.byteLength(out.text!.content)).toBe(EXTRACT_CAPS.text);
    expect(out.text!.truncated).toBe(true);
    expect(out.markdown).toEqual({ content: 'short', truncated: false });
    expect(out.html).toEqual({ content: '', truncated: false });
  });

  it('links: de-duplicated by URL, javascript: left out, at most 5,000, texts cut at 1,000 characters', () => {
    const raw = [
      { url: 'JavaScript:alert(1)', text: 'x', rel: null },
      { url: 'https://a.test/', text: 'first', rel: 'nofollow' },
      { url: 'https://a.test/', text: 'again', rel: null },
      { url: 42, text: 'not a URL' },
      'nonsense',
      { url: 'https://b.test/', text: 'z'.repeat(5_000), rel: 'r'.repeat(5_000) },
      ...Array.from({ length: 10_000 }, (_, i) => ({ url: `https://c.test/${i}`, text: '', rel: null })),
    ];
    const { links } = limitPageContent({ links: raw }, ['links']);
    expect(links).toHaveLength(5_000);
    expect(links!.slice(0, 2)).toEqual([
      { url: 'https://a.test/', text: 'first', rel: 'nofollow' },
      { url: 'https://b.test/', text: 'z'.repeat(1_000), rel: 'r'.repeat(1_000) },
    ]);
    expect(new Set(links!.map((l) => l.url)).size).toBe(5_000);
  });

  it('keeps only the kinds asked for; an answer of another shape gives empty contents', () => {
    expect(limitPageContent({ text: { content: 'x' }, links: [{ url: 'https://a.test/' }] }, ['html'])).toEqual({
      html: { content: '', truncated: false },
    });
    expect(limitPageContent(null, ['links', 'metadata'])).toEqual({
      links: [],
      metadata: {
        title: null,
        description: null,
        lang: null,
        canonicalUrl: null,
        siteName: null,
        image: null,
        favicon: null,
        openGraph: {},
        twitter: {},
      },
    });
  });
});

describe('cutUtf8 and cutChars', () => {
  it('cut at a character boundary', () => {
    expect(cutUtf8('aé😀', 3)).toEqual({ content: 'aé', truncated: true });
    expect(cutUtf8('aé😀', 6)).toEqual({ content: 'aé', truncated: true });
    expect(cutUtf8('aé😀', 7)).toEqual({ content: 'aé😀', truncated: false });
    expect(cutChars('ab😀', 3)).toBe('ab');
    expect(cutChars('ab😀', 4)).toBe('ab😀');
  });
});
