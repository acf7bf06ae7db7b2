import { isIP } from 'node:net';
import { HostResolver } from '../../src/egress/host-resolver';
import { decodePng, pixel } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/**
 * blockAds, blockTrackers and blockCookieBanners (CONTRACT.md "Capture options"). Host names
 * on the shipped lists (EasyList's `||adnxs.com^`, EasyPrivacy's `||scorecardresearch.com^$third-party`)
 * are mapped to the loopback page server through the injected resolver, so the test server counts every
 * request that is made; nothing leaves 127.0.0.1.
 */
describe('request and consent-banner blockers', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  const hits = new Map<string, number>();
  const count = (path: string) => hits.get(path) ?? 0;

  beforeAll(async () => {
    const counted =
      (path: string, type: string, body = '') =>
      (_req: unknown, res: import('node:http').ServerResponse) => {
        hits.set(path, count(path) + 1);
        res.writeHead(200, { 'content-type': type }).end(body);
      };
    // The page references the listed hosts on the page server's own port (read when it is served).
    pages = await startPageServer({
      '/ad.js': counted('/ad.js', 'text/javascript', 'void 0;'),
      '/beacon.gif': counted('/beacon.gif', 'image/gif'),
      '/own.css': counted('/own.css', 'text/css', 'body{margin:0}'),
      '/page': (_req, res) =>
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><head>
          <link rel="stylesheet" href="/own.css">
          <script src="http://ib.adnxs.com:${pages.port}/ad.js"></script>
        </head><body><img src="http://sb.scorecardresearch.com:${pages.port}/beacon.gif"></body></html>`),
      '/consent': `<!doctype html><html><body style="margin:0;background:rgb(255,255,255)">
        <p>Article</p>
        <div id="onetrust-consent-sdk">
          <div id="onetrust-banner-sdk" style="position:fixed;inset:0;background:rgb(255,0,0);z-index:9999">
            <p>We value your privacy</p>
            <button id="onetrust-accept-btn-handler">Accept all</button>
            <button id="onetrust-reject-all-handler">Reject all</button>
          </div>
        </div>
        <script>
          for (const id of ['onetrust-accept-btn-handler', 'onetrust-reject-all-handler']) {
            document.getElementById(id).addEventListener('click', () => { document.getElementById('onetrust-banner-sdk').style.display = 'none'; });
          }
        </script></body></html>`,
    });
    t = await startTestApp({
      env: { CAPTURE_TIMEOUT_MS: '8000' },
      override: (b) =>
        b.overrideProvider(HostResolver).useValue({
          resolve: async (host: string) => {
            if (isIP(host)) return [host];
            if (host === 'localhost' || host.endsWith('.adnxs.com') || host.endsWith('.scorecardresearch.com')) return ['127.0.0.1'];
            throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
          },
        }),
    });
    ({ key } = await t.createKey());
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function capture(body: Record<string, unknown>) {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { width: 300, height: 200, waitUntil: 'networkidle', ...body } });
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id, 60_000);
  }

  it('without blockers, the listed ad and tracker hosts are requested (through the egress proxy)', async () => {
    const before = { ad: count('/ad.js'), beacon: count('/beacon.gif'), css: count('/own.css') };
    expect(await capture({ url: `${pages.url}/page` })).toMatchObject({ status: 'done' });
    expect(count('/ad.js')).toBe(before.ad + 1);
    expect(count('/beacon.gif')).toBe(before.beacon + 1);
    expect(count('/own.css')).toBe(before.css + 1);
  });

  it('blockAds never makes the request to a host on EasyList; the page and its own files still load', async () => {
    const before = { ad: count('/ad.js'), beacon: count('/beacon.gif'), css: count('/own.css') };
    expect(await capture({ url: `${pages.url}/page`, blockAds: true })).toMatchObject({ status: 'done' });
    expect(count('/ad.js')).toBe(before.ad);
    expect(count('/beacon.gif')).toBe(before.beacon + 1);
    expect(count('/own.css')).toBe(before.css + 1);
  }, 60_000);

  it('blockTrackers never makes the request to a host on EasyPrivacy', async () => {
    const before = { ad: count('/ad.js'), beacon: count('/beacon.gif') };
    expect(await capture({ url: `${pages.url}/page`, blockTrackers: true })).toMatchObject({ status: 'done' });
    expect(count('/beacon.gif')).toBe(before.beacon);
    expect(count('/ad.js')).toBe(before.ad + 1);
  }, 60_000);

  it('blockCookieBanners makes a OneTrust-style consent banner disappear', async () => {
    const shown = await capture({ url: `${pages.url}/consent` });
    const png = async (url: string) => decodePng(Buffer.from(await (await fetch(url)).arrayBuffer()));
    expect(pixel(await png(shown.url), 150, 150)).toEqual([255, 0, 0]);
    const blocked = await capture({ url: `${pages.url}/consent`, blockCookieBanners: true });
    expect(blocked).toMatchObject({ status: 'done' });
    expect(pixel(await png(blocked.url), 150, 150)).toEqual([255, 255, 255]);
  }, 60_000);
});
