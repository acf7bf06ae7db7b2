import { IncomingMessage } from 'node:http';
import { decodePng, DecodedPng, pixel } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { waitForRun } from '../support/runs';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/**
 * blockResources, blockUrls, mask, maskColor, disableAnimations and geolocation (CONTRACT.md,
 * "Capture options, second set"): what the browser requested (the page server's request log) and
 * what the image shows.
 */
describe('capture options, second set', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  /** Paths (with query) the page server was asked for, in order. */
  let log: string[] = [];

  const png = (res: import('node:http').ServerResponse) =>
    res
      .writeHead(200, { 'content-type': 'image/png' })
      .end(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==', 'base64'));

  beforeAll(async () => {
    pages = await startPageServer({
      '/assets': `<!doctype html><html><head><link rel="stylesheet" href="/style.css"><script src="/app.js"></script></head>
        <body><img src="/img.png"><img src="/track/pixel.png"><script>fetch('/api/data')</script></body></html>`,
      '/style.css': (_req, res) => res.writeHead(200, { 'content-type': 'text/css' }).end('body { margin: 0 }'),
      '/app.js': (_req, res) => res.writeHead(200, { 'content-type': 'text/javascript' }).end('window.app = 1;'),
      '/img.png': (_req, res) => png(res),
      '/track/pixel.png': (_req, res) => png(res),
      '/api/data': (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
      '/masked': `<!doctype html><html><body style="margin:0;background:#fff">
        <div id="secret" style="position:absolute;left:40px;top:50px;width:100px;height:60px;background:rgb(0,0,255)">4111 1111</div>
        <div class="other" style="position:absolute;left:200px;top:50px;width:50px;height:50px;background:rgb(0,0,255)"></div></body></html>`,
      '/animated': `<!doctype html><html><head><style>
        body { margin: 0; background: #fff }
        div { position: absolute; top: 0; width: 60px; height: 60px }
        @keyframes fade { from { background: rgb(255, 0, 0) } to { background: rgb(0, 0, 255) } }
        @keyframes blink { from, to { background: rgb(255, 0, 0) } }
        #finite { left: 0; background: rgb(255, 0, 0); animation: fade 1000s linear 1 forwards }
        #infinite { left: 100px; background: rgb(0, 255, 0); animation: blink 1s infinite }
        #transition { left: 200px; background: rgb(0, 0, 0); transition: background-color 1000s linear }
        </style></head><body><div id="finite"></div><div id="infinite"></div><div id="transition"></div>
        <script>
          const el = document.getElementById('transition');
          el.getBoundingClientRect();
          el.style.backgroundColor = 'rgb(255, 255, 255)';
        </script></body></html>`,
      '/where': `<!doctype html><html><body><p id="out">waiting</p><script>
        navigator.geolocation.getCurrentPosition(
          (p) => fetch('/report?lat=' + p.coords.latitude + '&lon=' + p.coords.longitude + '&acc=' + p.coords.accuracy)
            .then(() => { document.getElementById('out').id = 'done'; }),
          (e) => fetch('/report?error=' + e.code).then(() => { document.getElementById('out').id = 'done'; }),
          { timeout: 3000 });
      </script></body></html>`,
      '/report': (_req, res) => res.writeHead(204).end(),
    });
    pages.server.on('request', (req: IncomingMessage) => log.push(req.url ?? ''));
    t = await startTestApp();
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function capture(body: Record<string, unknown>): Promise<any> {
    log = [];
    const res = await t.request('POST', '/v1/screenshot', { key, body: { width: 320, height: 200, ...body } });
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id);
  }

  async function image(job: { url: string }): Promise<DecodedPng> {
    return decodePng(Buffer.from(await (await fetch(job.url)).arrayBuffer()));
  }

  async function refused(body: Record<string, unknown>, path = '/v1/screenshot'): Promise<string[]> {
    const res = await t.request('POST', path, { key, body: { url: `${pages.url}/assets`, ...body } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    return res.body.details.fields.map((f: { field: string }) => f.field);
  }

  const ALL_ASSETS = ['/assets', '/style.css', '/app.js', '/img.png', '/track/pixel.png', '/api/data'];

  describe('blockResources and blockUrls: blocked requests never reach the server', () => {
    it('without them, the page loads every resource', async () => {
      expect(await capture({ url: `${pages.url}/assets`, waitUntil: 'networkidle' })).toMatchObject({ status: 'done' });
      expect([...log].sort()).toEqual([...ALL_ASSETS].sort());
    });

    it('blockResources ["image", "script"]: no image and no script request; the rest is made', async () => {
      const job = await capture({ url: `${pages.url}/assets`, waitUntil: 'networkidle', blockResources: ['image', 'script'] });
      expect(job).toMatchObject({ status: 'done', options: { blockResources: ['image', 'script'] } });
      expect([...log].sort()).toEqual(['/api/data', '/assets', '/style.css']);
    });

    it('blockResources ["stylesheet", "fetch"]', async () => {
      await capture({ url: `${pages.url}/assets`, waitUntil: 'networkidle', blockResources: ['stylesheet', 'fetch'] });
      expect([...log].sort()).toEqual(['/app.js', '/assets', '/img.png', '/track/pixel.png']);
    });

    it('blockUrls: globs over the whole URL, * any characters', async () => {
      const job = await capture({
        url: `${pages.url}/assets`,
        waitUntil: 'networkidle',
        blockUrls: ['*/track/*', '*.css', `${pages.url}/api/*`],
      });
      expect(job).toMatchObject({ status: 'done' });
      expect([...log].sort()).toEqual(['/app.js', '/assets', '/img.png']);
    });

    it('a run takes both as session options', async () => {
      log = [];
      const res = await t.request('POST', '/v1/runs', {
        key,
        body: {
          url: `${pages.url}/assets`,
          video: false,
          blockResources: ['image'],
          blockUrls: ['*/app.js'],
          steps: [{ action: 'wait', ms: 300 }],
        },
      });
      expect(res.status).toBe(202);
      expect(await waitForRun(t, key, res.body.id)).toMatchObject({ status: 'completed' });
      expect(log).toContain('/assets');
      expect(log).toContain('/style.css');
      expect(log).not.toContain('/img.png');
      expect(log).not.toContain('/track/pixel.png');
      expect(log).not.toContain('/app.js');
    });

    it('bad values: 400 naming the field, for captures and runs', async () => {
      expect(await refused({ blockResources: ['image', 'image'] })).toContain('blockResources');
      expect(await refused({ blockResources: ['document'] })).toContain('blockResources[0]');
      expect(await refused({ blockResources: [] })).toContain('blockResources');
      expect(await refused({ blockUrls: [] })).toContain('blockUrls');
      expect(await refused({ blockUrls: [''] })).toContain('blockUrls[0]');
      expect(await refused({ blockUrls: ['x'.repeat(513)] })).toContain('blockUrls[0]');
      expect(await refused({ blockUrls: Array.from({ length: 51 }, (_, i) => `*/${i}`) })).toContain('blockUrls');
      expect(await refused({ blockResources: ['video'] }, '/v1/runs')).toContain('blockResources[0]');
    });
  });

  describe('mask and maskColor', () => {
    it('covers the element box with #ff00ff by default, nothing else changes', async () => {
      const job = await capture({ url: `${pages.url}/masked`, mask: ['#secret'] });
      expect(job).toMatchObject({ status: 'done' });
      const img = await image(job);
      for (const [x, y] of [
        [40, 50],
        [90, 80],
        [139, 109],
      ])
        expect(pixel(img, x, y)).toEqual([255, 0, 255]);
      expect(pixel(img, 39, 80)).toEqual([255, 255, 255]);
      expect(pixel(img, 90, 110)).toEqual([255, 255, 255]);
      expect(pixel(img, 225, 75)).toEqual([0, 0, 255]);
    });

    it('maskColor, several selectors, at scale 2', async () => {
      const img = await image(await capture({ url: `${pages.url}/masked`, mask: ['#secret', '.other'], maskColor: '#00FF00', scale: 2 }));
      expect(pixel(img, 180, 160)).toEqual([0, 255, 0]);
      expect(pixel(img, 450, 150)).toEqual([0, 255, 0]);
      expect(pixel(img, 10, 10)).toEqual([255, 255, 255]);
    });

    it('an invalid selector fails the job; bad values and pdf are 400', async () => {
      expect(await capture({ url: `${pages.url}/masked`, mask: ['#ok', 'div[['] })).toMatchObject({
        status: 'failed',
        error: 'invalid selector in mask: div[[',
      });
      expect(await refused({ maskColor: 'red' })).toContain('maskColor');
      expect(await refused({ mask: [] })).toContain('mask');
      expect(await refused({ mask: ['#a'], format: 'pdf' })).toContain('mask');
      expect(await refused({ mask: ['#a'] }, '/v1/runs')).toContain('mask');
    });
  });

  describe('disableAnimations', () => {
    it('finishes a finite animation and a transition, cancels an infinite one', async () => {
      const img = await image(await capture({ url: `${pages.url}/animated`, disableAnimations: true }));
      expect(pixel(img, 30, 30)).toEqual([0, 0, 255]);
      expect(pixel(img, 130, 30)).toEqual([0, 255, 0]);
      expect(pixel(img, 230, 30)).toEqual([255, 255, 255]);
    });

    it('without it the animations are caught running', async () => {
      const img = await image(await capture({ url: `${pages.url}/animated` }));
      // 1000 s animations: seconds after load they are still near their start.
      expect(pixel(img, 30, 30)[0]).toBeGreaterThan(200);
      expect(pixel(img, 130, 30)).toEqual([255, 0, 0]);
      expect(pixel(img, 230, 30)[0]).toBeLessThan(50);
    });
  });

  describe('geolocation', () => {
    it('navigator.geolocation reports the coordinates, permission granted', async () => {
      const job = await capture({
        url: `${pages.url}/where`,
        geolocation: { latitude: 52.52, longitude: 13.405, accuracy: 10 },
        waitForSelector: '#done',
      });
      expect(job).toMatchObject({ status: 'done' });
      expect(log).toContain('/report?lat=52.52&lon=13.405&acc=10');
    });

    it('without it the page gets no position', async () => {
      expect(await capture({ url: `${pages.url}/where`, waitForSelector: '#done' })).toMatchObject({ status: 'done' });
      expect(log.filter((p) => p.startsWith('/report'))).toEqual([expect.stringMatching(/^\/report\?error=\d$/)]);
    });

    it('a run takes it as a session option', async () => {
      log = [];
      const res = await t.request('POST', '/v1/runs', {
        key,
        body: {
          url: `${pages.url}/where`,
          video: false,
          geolocation: { latitude: -33.86, longitude: 151.2 },
          steps: [{ action: 'waitForSelector', selector: '#done' }],
        },
      });
      expect(res.status).toBe(202);
      expect(await waitForRun(t, key, res.body.id)).toMatchObject({ status: 'completed' });
      expect(log).toContain('/report?lat=-33.86&lon=151.2&acc=0');
    });

    it('out of range: 400 naming the field', async () => {
      expect(await refused({ geolocation: { latitude: 91, longitude: 0 } })).toContain('geolocation.latitude');
      expect(await refused({ geolocation: { latitude: 0, longitude: -181 } })).toContain('geolocation.longitude');
      expect(await refused({ geolocation: { latitude: 0, longitude: 0, accuracy: -1 } })).toContain('geolocation.accuracy');
      expect(await refused({ geolocation: { latitude: 0 } })).toContain('geolocation.longitude');
    });
  });
});
