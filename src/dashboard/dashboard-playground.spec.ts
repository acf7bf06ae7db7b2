import { metadataRows, playgroundRequest, PLAYGROUND_TEXT_MAX_CHARS, shownLinks, shownText } from './dashboard-playground.service';
import { DashboardViews } from './dashboard-views';

describe('the playground', () => {
  it('sends the form as a capture request: integers as numbers, checkboxes as booleans and arrays, empty fields left out', () => {
    expect(
      playgroundRequest({ url: ' https://example.com ', width: '800', height: '', delay: 'soon', fullPage: 'on', extract: 'links' }),
    ).toEqual({
      url: 'https://example.com',
      width: 800,
      height: undefined,
      delay: 'soon',
      fullPage: true,
      format: undefined,
      extract: ['links'],
      markdownMode: undefined,
    });
    // markdownMode only with markdown extracted (the select always sends a value).
    expect(
      playgroundRequest({ url: 'https://a.test', extract: ['markdown', 'metadata'], markdownMode: 'full', format: 'none' }),
    ).toMatchObject({
      extract: ['markdown', 'metadata'],
      markdownMode: 'full',
      format: 'none',
      fullPage: false,
    });
    expect(playgroundRequest({ url: 'https://a.test', markdownMode: 'full' })).toMatchObject({
      extract: undefined,
      markdownMode: undefined,
    });
  });

  it('links only http(s) URLs of the target and shows the rest as text', () => {
    const links = shownLinks(
      JSON.stringify([
        { url: 'https://a.test/next', text: 'Next', rel: '' },
        { url: 'mailto:me@a.test', text: 'Mail', rel: '' },
        { url: 'data:text/html,<b>x</b>', text: '', rel: 'nofollow' },
      ]),
    );
    expect(links.map((l) => l.link)).toEqual([true, false, false]);
    expect(shownLinks('not json')).toEqual([]);

    const rows = metadataRows({
      title: 'T',
      description: null,
      lang: null,
      canonicalUrl: 'javascript:alert(1)',
      siteName: null,
      image: 'https://a.test/i.png',
      favicon: null,
      openGraph: { url: 'https://a.test/', type: 'article' },
      twitter: {},
      statusCode: 200,
      finalUrl: 'https://a.test/',
    });
    expect(rows).toEqual([
      { name: 'title', value: 'T', link: false },
      { name: 'canonicalUrl', value: 'javascript:alert(1)', link: false },
      { name: 'image', value: 'https://a.test/i.png', link: true },
      { name: 'statusCode', value: '200', link: false },
      { name: 'finalUrl', value: 'https://a.test/', link: true },
      { name: 'og:url', value: 'https://a.test/', link: true },
      { name: 'og:type', value: 'article', link: false },
    ]);
  });

  it('shows at most its cap of a text, never half a surrogate pair', () => {
    const long = `${'a'.repeat(PLAYGROUND_TEXT_MAX_CHARS - 1)}😀tail`;
    const shown = shownText(long);
    expect(shown).toEqual({ text: 'a'.repeat(PLAYGROUND_TEXT_MAX_CHARS - 1), cut: true });
    expect(shownText('short')).toEqual({ text: 'short', cut: false });
  });

  it("renders the target's content as text, never as markup", () => {
    const hostile = '<script>alert(1)</script><img src=x onerror=alert(2)>';
    const file = { url: '/files/x.md', bytes: 10, truncated: false, cut: false };
    const html = new DashboardViews().render('partials/playground-result', {
      result: {
        job: {
          id: 'scr_1',
          status: 'done',
          url: '/files/x.png',
          format: 'png',
          width: 800,
          height: 600,
          fullPage: false,
          clipped: false,
          targetStatus: 200,
          cached: false,
          error: null,
        },
        busy: false,
        markdown: { ...file, text: `# ${hostile}` },
        text: null,
        html: { ...file, text: hostile },
        links: { url: '/files/l.json', count: 1, items: [{ url: 'javascript:alert(3)', text: hostile, rel: '', link: false }] },
        metadata: [{ name: 'title', value: hostile, link: false }],
      },
    });
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('href="javascript:');
    expect(html.match(/&lt;script&gt;alert\(1\)&lt;\/script&gt;/g)?.length).toBe(4);
  });
});
