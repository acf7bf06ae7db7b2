import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** Paragraphs long enough for Readability to take the article as the main content. */
const PROSE = [
  'Glimpse renders pages in a real browser and hands back what an agent or a person needs from them.',
  'The extraction runs after the waits and the scripts, on the very page load that produces the image.',
  'Readability decides which part of the page is the article, and turndown writes that part as markdown.',
  'Navigation, footers and sidebars are left out in readable mode, and kept in full mode.',
]
  .map((p) => `<p>${p} ${p} ${p}</p>`)
  .join('\n');

const ARTICLE = `<!doctype html>
<html lang="en">
<head>
  <title>The Lighthouse Keeper's Log</title>
  <meta name="description" content="A log of nights at the lighthouse.">
  <meta property="og:title" content="Lighthouse Log (OG)">
  <meta property="og:site_name" content="Coastal Notes">
  <meta property="og:image" content="/images/cover.png">
  <meta property="og:type" content="article">
  <meta name="twitter:card" content="summary_large_image">
  <meta name="twitter:site" content="@coastal">
  <link rel="canonical" href="/articles/lighthouse">
  <link rel="icon" href="/favicon-32.png">
</head>
<body>
  <nav id="site-nav"><a href="/">Home</a> <a href="/about" rel="author">About us</a> <a href="/about">About again</a> <a href="https://other.example/x">Elsewhere</a> NAVIGATIONTEXT</nav>
  <main>
    <article>
      <h1>The Lighthouse Keeper's Log</h1>
      ${PROSE}
      <p><img src="/images/lamp.png" alt="The lamp"></p>
      <table>
        <thead><tr><th>Night</th><th>Ships seen</th></tr></thead>
        <tbody><tr><td>Monday</td><td>3</td></tr><tr><td>Tuesday</td><td>5</td></tr></tbody>
      </table>
      <pre><code>const beam = rotate(lamp, 360);</code></pre>
      <p>Read the <a href="/articles/previous">previous entry</a>.</p>
      <div id="late"></div>
    </article>
  </main>
  <footer>FOOTERTEXT <a href="/">Home</a></footer>
  <script>
    window.addEventListener('load', () => {
      const p = document.createElement('p');
      p.textContent = 'Added by a script at load: the fog lifted at dawn.';
      document.getElementById('late').appendChild(p);
    });
  </script>
</body>
</html>`;

/** A page of about 6 MiB of text: over the 5 MiB caps of markdown and text. */
const BIG = `<!doctype html><html><head><title>Big</title></head><body>${`<p>${'x'.repeat(1023)}</p>`.repeat(6 * 1024)}</body></html>`;

describe('extract (CONTRACT.md, "Extracted content")', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;

  beforeAll(async () => {
    pages = await startPageServer({ '/article': ARTICLE, '/big': BIG });
    t = await startTestApp();
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function captureDone(body: Record<string, unknown>, timeoutMs = 60_000): Promise<any> {
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    expect(res.status).toBe(202);
    const job = await waitForJob(t, key, res.body.id, timeoutMs);
    expect(job).toMatchObject({ status: 'done', error: null });
    return job;
  }

  async function download(url: string): Promise<{ text: string; contentType: string | null; bytes: number }> {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const data = Buffer.from(await res.arrayBuffer());
    return { text: data.toString('utf8'), contentType: res.headers.get('content-type'), bytes: data.length };
  }

  it('readable markdown: the title heading, the GFM table, a fenced code block, absolute images and links, the script-added text, no navigation', async () => {
    const job = await captureDone({ url: `${pages.url}/article`, extract: ['markdown'] });
    expect(job.url).toMatch(/\.png$/);
    expect(Object.keys(job.extracted)).toEqual(['markdown']);
    const md = await download(job.extracted.markdown.url);
    if (process.env.GLIMPSE_TEST_PRINT_MARKDOWN) console.log(md.text);
    expect(md.contentType).toBe('text/markdown; charset=utf-8');
    expect(job.extracted.markdown).toMatchObject({ bytes: md.bytes, truncated: false });
    // Readability's title (it prefers og:title to <title>) is the first heading; the article's h1 follows as h2.
    expect(md.text.startsWith("# Lighthouse Log (OG)\n\n## The Lighthouse Keeper's Log\n")).toBe(true);
    expect(md.text).toMatch(/\|\s*Night\s*\|\s*Ships seen\s*\|/);
    expect(md.text).toMatch(/\|\s*-+\s*\|\s*-+\s*\|/);
    expect(md.text).toMatch(/\|\s*Tuesday\s*\|\s*5\s*\|/);
    expect(md.text).toContain('```\nconst beam = rotate(lamp, 360);\n```');
    expect(md.text).toContain(`![The lamp](${pages.url}/images/lamp.png)`);
    expect(md.text).toContain(`[previous entry](${pages.url}/articles/previous)`);
    expect(md.text).toContain('the fog lifted at dawn');
    expect(md.text).not.toContain('NAVIGATIONTEXT');
    expect(md.text).not.toContain('FOOTERTEXT');
  });

  it('full markdown keeps the navigation and the footer', async () => {
    const job = await captureDone({ url: `${pages.url}/article`, extract: ['markdown'], markdownMode: 'full', format: 'none' });
    const md = await download(job.extracted.markdown.url);
    expect(md.text).toContain('NAVIGATIONTEXT');
    expect(md.text).toContain('FOOTERTEXT');
    expect(md.text).toContain(`[About us](${pages.url}/about)`);
    expect(md.text).toMatch(/\|\s*Monday\s*\|\s*3\s*\|/);
  });

  it('metadata, links, text and html from one page load', async () => {
    const job = await captureDone({ url: `${pages.url}/article`, extract: ['metadata', 'links', 'text', 'html'] });
    expect(job.extracted.metadata).toEqual({
      title: "The Lighthouse Keeper's Log",
      description: 'A log of nights at the lighthouse.',
      lang: 'en',
      canonicalUrl: `${pages.url}/articles/lighthouse`,
      siteName: 'Coastal Notes',
      image: `${pages.url}/images/cover.png`,
      favicon: `${pages.url}/favicon-32.png`,
      openGraph: { title: 'Lighthouse Log (OG)', site_name: 'Coastal Notes', image: '/images/cover.png', type: 'article' },
      twitter: { card: 'summary_large_image', site: '@coastal' },
      statusCode: 200,
      finalUrl: `${pages.url}/article`,
    });

    const links = await download(job.extracted.links.url);
    expect(links.contentType).toMatch(/^application\/json/);
    const list = JSON.parse(links.text);
    expect(list).toEqual([
      { url: `${pages.url}/`, text: 'Home', rel: null },
      { url: `${pages.url}/about`, text: 'About us', rel: 'author' },
      { url: 'https://other.example/x', text: 'Elsewhere', rel: null },
      { url: `${pages.url}/articles/previous`, text: 'previous entry', rel: null },
    ]);
    expect(job.extracted.links.count).toBe(4);

    const text = await download(job.extracted.text.url);
    expect(text.contentType).toBe('text/plain; charset=utf-8');
    expect(text.text).toContain('NAVIGATIONTEXT');
    expect(text.text).toContain('Added by a script at load');
    expect(text.text).not.toContain('<p>');
    expect(job.extracted.text).toMatchObject({ bytes: text.bytes, truncated: false });

    const html = await download(job.extracted.html.url);
    expect(html.contentType).toBe('text/html; charset=utf-8');
    expect(html.text.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
    expect(html.text).toContain('<p>Added by a script at load: the fog lifted at dawn.</p>');
  });

  it('format none: no image, the job url null, the extracted content there', async () => {
    const job = await captureDone({ url: `${pages.url}/article`, format: 'none', extract: ['metadata'] });
    expect(job).toMatchObject({ url: null, format: 'none' });
    expect(job.extracted.metadata.title).toBe("The Lighthouse Keeper's Log");
  });

  it('over the caps: markdown and text cut at 5 MiB and marked truncated; html under its 10 MiB cap kept whole', async () => {
    const job = await captureDone(
      { url: `${pages.url}/big`, format: 'none', extract: ['markdown', 'text', 'html'], markdownMode: 'full' },
      120_000,
    );
    const cap = 5 * 1024 * 1024;
    expect(job.extracted.markdown).toMatchObject({ bytes: cap, truncated: true });
    expect(job.extracted.text).toMatchObject({ bytes: cap, truncated: true });
    expect(job.extracted.html.truncated).toBe(false);
    expect(job.extracted.html.bytes).toBeGreaterThan(6 * 1024 * 1024);
    const text = await download(job.extracted.text.url);
    expect(text.bytes).toBe(cap);
    expect(text.text.slice(0, 100)).toBe('x'.repeat(100));
  });

  it('refuses format none without extract, and repeated or unknown extract values (400, nothing created)', async () => {
    const none = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/article`, format: 'none' } });
    expect(none.status).toBe(400);
    expect(none.body.details.fields).toEqual([{ field: 'format', message: 'none is only allowed with extract' }]);
    const repeated = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/article`, extract: ['text', 'text'] } });
    expect(repeated.status).toBe(400);
    expect(repeated.body.details.fields[0].field).toBe('extract');
    const unknown = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/article`, extract: ['pdf'] } });
    expect(unknown.status).toBe(400);
  });

  it('a batch item and an upload take extract too', async () => {
    const batch = await t.request('POST', '/v1/screenshot/batch', {
      key,
      body: { items: [{ url: `${pages.url}/article`, format: 'none', extract: ['metadata'] }] },
    });
    expect(batch.status).toBe(202);
    const job = await waitForJob(t, key, batch.body.data[0].id);
    expect(job.extracted.metadata.siteName).toBe('Coastal Notes');

    const form = new FormData();
    form.append('format', 'none');
    form.append('extract', '["markdown","metadata"]');
    form.append('file', new Blob([ARTICLE], { type: 'text/html' }), 'page.html');
    const res = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(res.status).toBe(202);
    const uploaded = await waitForJob(t, key, ((await res.json()) as { id: string }).id);
    expect(uploaded).toMatchObject({ status: 'done', url: null });
    expect(uploaded.extracted.metadata.title).toBe("The Lighthouse Keeper's Log");
    const md = await download(uploaded.extracted.markdown.url);
    expect(md.text).toContain('| Tuesday | 5 |');
  });
});
