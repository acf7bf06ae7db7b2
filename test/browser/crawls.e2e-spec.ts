import { DataSource } from 'typeorm';
import { gzipSync } from 'node:zlib';
import { fromBuffer, Entry, ZipFile } from 'yauzl';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';
import { CrawlProcessor } from '../../src/crawls/crawl.processor';

/** A page with `links` (hrefs as written) and a title. */
const page = (title: string, links: string[] = []) =>
  `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;

const xml = (body: string) => (_req: unknown, res: { writeHead: (s: number, h: object) => { end: (b: string | Buffer) => void } }) =>
  res.writeHead(200, { 'content-type': 'application/xml' }).end(body);

/** Every entry of a ZIP: path → bytes. */
function unzip(data: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    fromBuffer(data, { lazyEntries: true }, (err, zip?: ZipFile) => {
      if (err || !zip) return reject(err);
      const files = new Map<string, Buffer>();
      zip.on('entry', (entry: Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(files));
      zip.readEntry();
    });
  });
}

describe('crawls (CONTRACT.md, "Crawls")', () => {
  let t: TestApp;
  let site: PageServer;
  let db: DataSource;
  let requested: string[] = [];

  beforeAll(async () => {
    let origin = '';
    const routes = {
      '/robots.txt': (_req: unknown, res: any) =>
        res
          .writeHead(200, { 'content-type': 'text/plain' })
          .end(`User-agent: *\nDisallow: /nobody\n\nUser-agent: Glimpse\nDisallow: /private\n\nSitemap: ${origin}/sitemap-index.xml\n`),
      '/sitemap-index.xml': (req: any, res: any) =>
        xml(`<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <sitemap><loc>${origin}/sitemap-a.xml.gz</loc></sitemap></sitemapindex>`)(req, res),
      '/sitemap-a.xml.gz': (_req: unknown, res: any) =>
        res.writeHead(200, { 'content-type': 'application/gzip' }).end(
          gzipSync(
            `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY boom "boomboomboom">]><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
              <url><loc>${origin}/s1</loc></url><url><loc>${origin}/s2?x=1&amp;y=2</loc></url><url><loc>${origin}/private/from-sitemap</loc></url>
              <url><loc>${origin}/&boom;</loc></url></urlset>`,
          ),
        ),
      '/sitemap.xml': (req: any, res: any) =>
        xml(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${origin}/s3</loc></url></urlset>`)(
          req,
          res,
        ),
      '/s1': page('S1'),
      '/s2': page('S2'),
      '/s3': page('S3'),
      // A hub linking to 12 pages that answer after 1.5 s: a crawl of it has jobs waiting for a browser slot.
      '/hub': page(
        'Hub',
        Array.from({ length: 12 }, (_, i) => `/slow${i}`),
      ),
      ...Object.fromEntries(
        Array.from({ length: 12 }, (_, i) => [
          `/slow${i}`,
          (_req: unknown, res: any) => setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(page(`Slow ${i}`)), 1500),
        ]),
      ),
      '/skip/me': page('Skipped'),
      '/private/x': page('Private'),
    } as Record<string, any>;
    site = await startPageServer(routes);
    origin = site.url;
    const host = new URL(origin).host;
    Object.assign(routes, {
      '/': page('Home', [
        '/a',
        '/a#top',
        `http://${host}/a?`,
        `HTTP://127.0.0.1:${site.port}/b`,
        '/b/../a',
        '/private/x',
        '/skip/me',
        'http://elsewhere.test/',
        'mailto:x@example.com',
      ]),
      '/a': page('A', ['/a/deep1', '/']),
      '/b': page('B', ['/', '/a']),
      '/a/deep1': page('Deep 1', ['/a/deep2']),
      '/a/deep2': page('Deep 2'),
    });
    const server = site.server;
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      requested.push(req.url ?? '/');
      const route = routes[path];
      if (route === undefined) res.writeHead(404).end('not found');
      else if (typeof route === 'string') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(route);
      else route(req, res);
    });
    t = await startTestApp();
    db = t.get(DataSource);
  });

  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  beforeEach(() => {
    requested = [];
  });

  async function waitForCrawl(key: string, id: string, timeoutMs = 120_000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await t.request('GET', `/v1/crawls/${id}`, { key });
      expect(res.status).toBe(200);
      if (['completed', 'failed', 'canceled'].includes(res.body.status)) return res.body;
      if (Date.now() > deadline) throw new Error(`crawl ${id} still ${res.body.status}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  async function allPages(key: string, id: string): Promise<any[]> {
    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await t.request('GET', `/v1/crawls/${id}/pages?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(res.status).toBe(200);
      pages.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    return pages;
  }

  it('discovers from robots.txt, a gzipped sitemap index, /sitemap.xml and links to maxDepth; each page once; bundle and event', async () => {
    const { key } = await t.createKey('pro');
    const res = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/`, maxDepth: 2, exclude: ['/skip/*'] } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^crl_/),
      status: 'pending',
      pagesFound: 0,
      bundleUrl: null,
      stoppedReason: null,
    });
    const crawl = await waitForCrawl(key, res.body.id);
    // The sitemap's DOCTYPE entity is never expanded: its text stays as written.
    const expected = ['/', '/a', '/b', '/a/deep1', '/s1', '/s2?x=1&y=2', '/s3', '/&boom;'].map((p) => `${site.url}${p}`).sort();
    const pages = await allPages(key, crawl.id);
    expect(pages.map((p) => p.url).sort()).toEqual(expected);
    expect(crawl).toMatchObject({
      status: 'completed',
      stoppedReason: 'exhausted',
      pagesFound: expected.length,
      pagesQueued: expected.length,
      pagesDone: expected.length,
      pagesFailed: 0,
      error: null,
    });
    expect(pages.find((p) => p.url === `${site.url}/a/deep1`)).toMatchObject({ depth: 2, status: 'done', title: 'Deep 1' });
    expect(pages.find((p) => p.url === `${site.url}/`)).toMatchObject({ depth: 0, title: 'Home' });
    expect(pages.find((p) => p.url === `${site.url}/s1`)).toMatchObject({ depth: 0, title: 'S1' });
    // Never fetched: robots.txt refuses /private for Glimpse, /skip is excluded, deep2 is past maxDepth.
    expect(requested.filter((r) => r.startsWith('/private') || r.startsWith('/skip') || r === '/a/deep2')).toEqual([]);
    // One job per page, each an ordinary job with crawlId.
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM screenshot_jobs WHERE crawl_id = $1`, [crawl.id]);
    expect(n).toBe(expected.length);
    const job = await t.request('GET', `/v1/screenshot/${pages[0].jobId}`, { key });
    expect(job.body).toMatchObject({ status: 'done', crawlId: crawl.id });

    const bundle = await fetch(crawl.bundleUrl);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toBe('application/zip');
    const files = await unzip(Buffer.from(await bundle.arrayBuffer()));
    const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8'));
    expect(manifest.map((m: any) => m.url).sort()).toEqual(expected);
    expect(requested.some((r) => r.includes('boomboom'))).toBe(false);
    for (const entry of manifest) {
      expect(entry).toMatchObject({ status: 'done', file: expect.stringMatching(/^pages\/\d{4}\.png$/) });
      expect(files.get(entry.file)!.subarray(1, 4).toString()).toBe('PNG');
      expect(JSON.parse(files.get(entry.extracted.links)!.toString('utf8'))).toEqual(expect.any(Array));
    }

    const [event] = await db.query(`SELECT type, data FROM events WHERE type = 'crawl.completed' AND data->>'crawlId' = $1`, [crawl.id]);
    expect(event.data).toMatchObject({
      url: `${site.url}/`,
      pagesDone: expected.length,
      stoppedReason: 'exhausted',
      bundleUrl: crawl.bundleUrl,
    });
  });

  it('maxPages stops creating jobs and says so; respectRobots: false and discover: links follow only links', async () => {
    const { key } = await t.createKey('pro');
    const res = await t.request('POST', '/v1/crawls', {
      key,
      body: { url: `${site.url}/`, maxPages: 2, discover: 'links', respectRobots: false },
    });
    const crawl = await waitForCrawl(key, res.body.id);
    expect(crawl).toMatchObject({ status: 'completed', stoppedReason: 'maxPages', pagesQueued: 2, pagesDone: 2 });
    expect(crawl.pagesFound).toBeGreaterThan(2);
    const pages = await allPages(key, crawl.id);
    expect(pages.filter((p) => p.status === 'skipped').every((p) => p.jobId === null)).toBe(true);
    expect(pages.some((p) => p.url.includes('/private/x'))).toBe(true);
    expect(requested.some((r) => r.startsWith('/sitemap'))).toBe(false);
  });

  it('stops at the quota (stoppedReason quota), counting only the jobs it created', async () => {
    const { key, keyId } = await t.createKey('free');
    const month = new Date().toISOString().slice(0, 7) + '-01';
    await db.query(`INSERT INTO quota_usage (api_key_id, month, used) VALUES ($1, $2, 98)`, [keyId, month]);
    const res = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/`, maxDepth: 1 } });
    const crawl = await waitForCrawl(key, res.body.id);
    expect(crawl).toMatchObject({ status: 'completed', stoppedReason: 'quota', pagesQueued: 2 });
    const [{ used }] = await db.query(`SELECT used FROM quota_usage WHERE api_key_id = $1 AND month = $2`, [keyId, month]);
    expect(used).toBe(100);
  });

  it('cancel: a pending crawl ends at once; a running one fails its jobs not started, keeps them counted, and ends canceled with a bundle', async () => {
    const { key, keyId } = await t.createKey('pro');
    const pending = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/`, maxDepth: 2 } });
    const canceledAtOnce = await t.request('POST', `/v1/crawls/${pending.body.id}/cancel`, { key });
    expect(canceledAtOnce.status).toBe(202);
    expect((await waitForCrawl(key, pending.body.id)).status).toBe('canceled');

    const res = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/hub`, maxDepth: 1, discover: 'links' } });
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM screenshot_jobs WHERE crawl_id = $1 AND status = 'pending'`, [
        res.body.id,
      ]);
      // The hub's own job is pending first; 3 or more means slow pages wait for a browser slot.
      if (n >= 3) break;
    }
    const cancel = await t.request('POST', `/v1/crawls/${res.body.id}/cancel`, { key });
    expect(cancel.status).toBe(202);
    const crawl = await waitForCrawl(key, res.body.id);
    expect(crawl).toMatchObject({ status: 'canceled', stoppedReason: 'canceled', bundleUrl: expect.stringContaining('/files/') });
    const jobs: { status: string; error: string | null }[] = await db.query(
      `SELECT status, error FROM screenshot_jobs WHERE crawl_id = $1`,
      [res.body.id],
    );
    const canceledJobs = jobs.filter((j) => j.error === 'the crawl was canceled before this page was captured');
    expect(canceledJobs.length).toBeGreaterThan(0);
    expect(canceledJobs.every((j) => j.status === 'failed')).toBe(true);
    expect(crawl.pagesQueued).toBe(jobs.length);
    const [{ used }] = await db.query(`SELECT COALESCE(SUM(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1`, [keyId]);
    expect(used).toBe(jobs.length);
    const again = await t.request('POST', `/v1/crawls/${res.body.id}/cancel`, { key });
    expect(again).toMatchObject({ status: 202, body: { status: 'canceled' } });
  });

  it('the sweep deletes a bundle past RESULT_TTL_DAYS (its URL is 404 since)', async () => {
    const { key } = await t.createKey('pro');
    const res = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/s1`, maxDepth: 0, discover: 'links' } });
    const crawl = await waitForCrawl(key, res.body.id);
    expect((await fetch(crawl.bundleUrl)).status).toBe(200);
    expect(await t.get(CrawlProcessor).sweep()).toBe(0);
    await db.query(`UPDATE crawls SET completed_at = now() - make_interval(days => $2) WHERE id = $1`, [
      crawl.id,
      t.config.resultTtlDays + 1,
    ]);
    expect(await t.get(CrawlProcessor).sweep()).toBe(1);
    const [row] = await db.query(`SELECT bundle_deleted_at FROM crawls WHERE id = $1`, [crawl.id]);
    expect(row.bundle_deleted_at).not.toBeNull();
    expect((await fetch(crawl.bundleUrl)).status).toBe(404);
  });

  it('refuses bad input with 400 and plan limits with 403, writing nothing', async () => {
    const { key, accountId } = await t.createKey('free');
    const bad: [object, string][] = [
      [{ url: 'ftp://x.test/' }, 'url'],
      [{ url: `${site.url}/`, maxDepth: 6 }, 'maxDepth'],
      [{ url: `${site.url}/`, maxPages: 0 }, 'maxPages'],
      [{ url: `${site.url}/`, scope: 'world' }, 'scope'],
      [{ url: `${site.url}/`, include: [] }, 'include'],
      [{ url: `${site.url}/`, capture: { width: 'wide' } }, 'capture.width'],
      [{ url: `${site.url}/`, capture: { upload: { url: 'https://bucket.test/x' } } }, 'capture.upload'],
    ];
    for (const [body, field] of bad) {
      const res = await t.request('POST', '/v1/crawls', { key, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', requestId: expect.any(String) });
      expect(JSON.stringify(res.body.details)).toContain(field);
    }
    const tooMany = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/`, maxPages: 21 } });
    expect(tooMany.status).toBe(403);
    expect(tooMany.body).toMatchObject({ code: 'PLAN_LIMIT_REACHED', details: { resource: 'crawl_pages', limit: 20, plan: 'free' } });
    const first = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/`, maxDepth: 0, discover: 'links' } });
    expect(first.status).toBe(202);
    expect(first.body.url).toBe(`${site.url}/`);
    const second = await t.request('POST', '/v1/crawls', { key, body: { url: `${site.url}/` } });
    expect(second.status).toBe(403);
    expect(second.body).toMatchObject({ code: 'PLAN_LIMIT_REACHED', details: { resource: 'running_crawls', limit: 1, plan: 'free' } });
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM crawls WHERE account_id = $1`, [accountId]);
    expect(n).toBe(1);
    expect((await t.request('GET', '/v1/crawls/crl_nope', { key })).status).toBe(404);
    expect((await t.request('GET', '/v1/crawls?cursor=bad', { key })).status).toBe(400);
    const list = await t.request('GET', '/v1/crawls', { key });
    expect(list.body).toMatchObject({ data: [{ id: first.body.id }], nextCursor: null });
    await waitForCrawl(key, first.body.id);
  });
});
