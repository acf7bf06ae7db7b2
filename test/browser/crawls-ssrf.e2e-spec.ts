import { AddressPolicy, blockedAddressReason } from '../../src/egress/address-policy';
import { HostResolver } from '../../src/egress/host-resolver';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * A crawl on the strict instance (`SSRF_ALLOW_PRIVATE=false`), on loopback only: the address policy
 * treats 127.0.0.2 as public (the site) and 127.0.0.1 as the private network, as in ssrf.e2e-spec.ts;
 * `site.test` resolves to the site and `inside.site.test` (in the crawl's domain scope) to the private network.
 */
describe('crawls behind the SSRF guard (CONTRACT.md, "Crawls": every page fetched by the capture path)', () => {
  const PUBLIC = '127.0.0.2';
  let t: TestApp;
  let internal: PageServer;
  let site: PageServer;
  let internalHits = 0;

  beforeAll(async () => {
    internal = await startPageServer({
      '/secret': (_req, res) => {
        internalHits++;
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>internal</h1>');
      },
      '/sitemap.xml': (_req, res) => {
        internalHits++;
        res.writeHead(200).end('<urlset/>');
      },
    });
    const secret = `http://inside.site.test:${internal.port}/secret`;
    site = await startPageServer(
      {
        '/': `<html><head><title>Public</title></head><body><a href="/next">next</a> <a href="${secret}">secret</a></body></html>`,
        '/next': '<html><head><title>Next</title></head><body>next</body></html>',
        '/robots.txt': (_req, res) => res.writeHead(200).end(`Sitemap: http://127.0.0.1:${internal.port}/sitemap.xml\n`),
      },
      PUBLIC,
    );
    t = await startTestApp({
      env: { SSRF_ALLOW_PRIVATE: 'false' },
      override: (b) =>
        b
          .overrideProvider(HostResolver)
          .useValue({
            resolve: async (host: string) => {
              if (host === 'site.test') return [PUBLIC];
              if (host === 'inside.site.test' || host === 'localhost') return ['127.0.0.1'];
              throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
            },
          })
          .overrideProvider(AddressPolicy)
          .useValue({ blockedReason: (a: string) => (a === PUBLIC ? null : blockedAddressReason(a)) }),
    });
  });

  afterAll(async () => {
    await t?.close();
    await site?.close();
    await internal?.close();
  });

  it('a link (or a sitemap) on a refused address is dropped and never fetched; a refused start URL is 400', async () => {
    const { key } = await t.createKey('pro');
    const refused = await t.request('POST', '/v1/crawls', { key, body: { url: `http://127.0.0.1:${internal.port}/secret` } });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('TARGET_NOT_ALLOWED');
    const res = await t.request('POST', '/v1/crawls', {
      key,
      body: { url: `http://site.test:${site.port}/`, scope: 'domain', maxDepth: 1 },
    });
    expect(res.status).toBe(202);
    let crawl: any;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      crawl = (await t.request('GET', `/v1/crawls/${res.body.id}`, { key })).body;
      if (crawl.status !== 'pending' && crawl.status !== 'running') break;
    }
    const first = (await t.request('GET', `/v1/crawls/${res.body.id}/pages`, { key })).body.data[0];
    expect([crawl, (await t.request('GET', `/v1/screenshot/${first.jobId}`, { key })).body.error]).toMatchObject([
      { status: 'completed', pagesFound: 2, pagesDone: 2 },
      null,
    ]);
    const pages = (await t.request('GET', `/v1/crawls/${res.body.id}/pages`, { key })).body.data;
    expect(pages.map((p: any) => p.url).sort()).toEqual([`http://site.test:${site.port}/`, `http://site.test:${site.port}/next`]);
    expect(internalHits).toBe(0);
  });
});
