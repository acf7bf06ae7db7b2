import { readFileSync } from 'node:fs';
import { createServer, IncomingMessage, request as httpRequest, Server } from 'node:http';
import { AddressInfo, connect } from 'node:net';
import sharp from 'sharp';
import { AddressPolicy, blockedAddressReason } from '../../src/egress/address-policy';
import { HostResolver, SystemHostResolver } from '../../src/egress/host-resolver';
import { PageServer, startPageServer } from '../support/page-server';
import { waitForRun } from '../support/runs';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** What the loopback upstream proxy was asked to forward: `CONNECT host:port` (or a request in absolute form, which the egress proxy never sends). */
interface Forwarded {
  line: string;
  authorization: string | undefined;
}

/**
 * A forward proxy on 127.0.0.1 standing for an operator's upstream (`EGRESS_PROXIES`): it records
 * every request it is asked to forward, answers 407 unless the request carries `authorization`, and
 * forwards the rest (absolute-form HTTP with Node's client, CONNECT as a byte pipe).
 */
async function startUpstreamProxy(authorization: string): Promise<{ server: Server; port: number; seen: Forwarded[] }> {
  const seen: Forwarded[] = [];
  const allowed = (req: IncomingMessage) => req.headers['proxy-authorization'] === authorization;
  const server = createServer((req, res) => {
    seen.push({ line: `${req.method} ${req.url}`, authorization: req.headers['proxy-authorization'] });
    if (!allowed(req)) return void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="upstream"' }).end();
    const target = new URL(req.url ?? '');
    const { 'proxy-authorization': _auth, ...headers } = req.headers;
    const out = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers },
      (answer) => {
        const { 'transfer-encoding': _te, connection: _c, 'keep-alive': _k, ...forwarded } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, forwarded);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  server.on('connect', (req: IncomingMessage, client, head: Buffer) => {
    seen.push({ line: `CONNECT ${req.url}`, authorization: req.headers['proxy-authorization'] });
    client.on('error', () => undefined);
    if (!allowed(req)) return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n');
    const [host, port] = (req.url ?? '').split(':');
    const site = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      site.write(head);
      site.pipe(client);
      client.pipe(site);
    });
    site.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

/**
 * thumbnail, fullPageMaxHeight and proxy (CONTRACT.md, "Capture options, second set"): the stored
 * thumbnail decoded, a stitched tall page read at its seams, and what a loopback upstream proxy saw.
 */
/** Colour of the 1,000 px band starting at `band` × 1,000 px of {@link TALL_PAGE}. */
const bandColour = (band: number) => [(band * 37) % 256, (band * 91) % 256, (band * 53 + 7) % 256];

/**
 * 30,000 px tall, 30 bands of 1,000 px in distinct colours, and a green band from 16,300 to 16,500 px
 * across the first section's end (16,384 px): the rows around the seam show whether the sections were
 * placed right.
 */
const TALL_PAGE = `<!doctype html><html><body style="margin:0">${Array.from(
  { length: 30 },
  (_, i) => `<div style="height:1000px;background:rgb(${bandColour(i).join(',')})"></div>`,
).join('')}<div style="position:absolute;left:0;top:16300px;width:100%;height:200px;background:rgb(0,200,0)"></div></body></html>`;

/**
 * `SSRF_ALLOW_PRIVATE=false` with an address policy that treats 127.0.0.2 as public (the pages are
 * served there) and everything else as usual: 127.0.0.1 stands for the private network, so the guard
 * is seen refusing before anything reaches the upstream proxy.
 */
describe('capture options, second set: thumbnail, fullPageMaxHeight, proxy', () => {
  const PUBLIC = '127.0.0.2';
  /** A name the service's resolver answers with {@link PUBLIC}; the upstream proxy must never be told it. */
  const NAME = 'pages.test';
  /** `Host` headers of the requests for `/proxied` the page server got. */
  const proxiedHosts: (string | undefined)[] = [];
  const PASSWORD = 'upstream-s3cret-pw';
  const AUTHORIZATION = `Basic ${Buffer.from(`tester:${PASSWORD}`).toString('base64')}`;
  let t: TestApp;
  let pages: PageServer;
  let internal: PageServer;
  let upstream: Awaited<ReturnType<typeof startUpstreamProxy>>;
  let key: string;

  beforeAll(async () => {
    internal = await startPageServer({ '/secret.png': '<h1>internal</h1>' });
    upstream = await startUpstreamProxy(AUTHORIZATION);
    pages = await startPageServer(
      {
        // An https image (a CONNECT tunnel; TLS then fails against this plain server), a private one (refused by the guard) and a plain one.
        '/proxied': (req, res) => {
          proxiedHosts.push(req.headers.host);
          res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body><h1>via upstream</h1>
          <img src="https://${NAME}:${pages.port}/tls.png">
          <img src="http://127.0.0.1:${internal.port}/secret.png">
          <img src="http://${NAME}:${pages.port}/plain.png"></body></html>`);
        },
        '/plain.png': (_req, res) => res.writeHead(404).end(),
        // 400 × 300 viewport: left half red, right half blue.
        '/halves': `<!doctype html><html><body style="margin:0">
        <div style="position:absolute;left:0;top:0;width:200px;height:300px;background:rgb(255,0,0)"></div>
        <div style="position:absolute;left:200px;top:0;width:200px;height:300px;background:rgb(0,0,255)"></div></body></html>`,
        '/tall': TALL_PAGE,
      },
      PUBLIC,
    );
    t = await startTestApp({
      env: {
        SSRF_ALLOW_PRIVATE: 'false',
        CAPTURE_TIMEOUT_MS: '5000',
        EGRESS_PROXIES: JSON.stringify({
          up: `http://tester:${PASSWORD}@127.0.0.1:${upstream.port}`,
          locked: `http://tester:wrong-${PASSWORD}@127.0.0.1:${upstream.port}`,
        }),
      },
      override: (b) =>
        b
          .overrideProvider(AddressPolicy)
          .useValue({
            blockedReason: (address: string) => (address === PUBLIC ? null : blockedAddressReason(address)),
          })
          .overrideProvider(HostResolver)
          .useValue({ resolve: (host: string) => (host === NAME ? Promise.resolve([PUBLIC]) : new SystemHostResolver().resolve(host)) }),
    });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
    await internal?.close();
    await new Promise((resolve) => upstream?.server.close(resolve));
  });

  async function capture(body: Record<string, unknown>): Promise<any> {
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id);
  }

  async function download(url: string): Promise<Buffer> {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  /** RGB of the pixel at (x, y) of an encoded image. */
  async function rgbAt(image: Buffer, x: number, y: number): Promise<number[]> {
    const { data, info } = await sharp(image).extract({ left: x, top: y, width: 1, height: 1 }).raw().toBuffer({ resolveWithObject: true });
    return [...data.subarray(0, 3)].concat(info.channels === 4 ? [data[3]] : []);
  }

  /** Captures left this month after a request (X-RateLimit-Remaining): unchanged when nothing was counted. */
  const remaining = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-remaining'));

  /** Submits bodies that must be refused with 400 VALIDATION_FAILED and counted nowhere; returns the fields named. */
  async function refusedFields(bodies: Record<string, unknown>[]): Promise<string[][]> {
    const counted = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/halves` } });
    expect(counted.status).toBe(202);
    const left = remaining(counted);
    expect(left).toBeGreaterThan(0);
    const fields: string[][] = [];
    for (const body of bodies) {
      const res = await t.request('POST', '/v1/screenshot', { key, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
      expect(remaining(res)).toBe(left);
      fields.push(res.body.details.fields.map((f: { field: string }) => f.field));
    }
    return fields;
  }

  describe('thumbnail', () => {
    it('inside (default): width only keeps the aspect ratio; the job has thumbnailUrl, served as the result', async () => {
      const job = await capture({ url: `${pages.url}/halves`, width: 400, height: 300, thumbnail: { width: 100 } });
      expect(job).toMatchObject({ status: 'done', options: { thumbnail: { width: 100 } } });
      expect(job.thumbnailUrl).toMatch(/\/files\/[^/]+\.png$/);
      expect(job.thumbnailUrl).not.toBe(job.url);
      const thumb = await download(job.thumbnailUrl);
      expect(await sharp(thumb).metadata()).toMatchObject({ format: 'png', width: 100, height: 75 });
      expect((await rgbAt(thumb, 10, 40)).slice(0, 3)).toEqual([255, 0, 0]);
      expect((await rgbAt(thumb, 90, 40)).slice(0, 3)).toEqual([0, 0, 255]);
      expect(await sharp(await download(job.url)).metadata()).toMatchObject({ width: 400, height: 300 });
    });

    it('cover fills the box and crops; contain pads; inside stays within it; jpeg stays jpeg', async () => {
      const [cover, contain, inside] = await Promise.all([
        capture({ url: `${pages.url}/halves`, width: 400, height: 300, thumbnail: { width: 60, height: 60, fit: 'cover' } }),
        capture({ url: `${pages.url}/halves`, width: 400, height: 300, thumbnail: { width: 80, height: 80, fit: 'contain' } }),
        capture({ url: `${pages.url}/halves`, width: 400, height: 300, format: 'jpeg', thumbnail: { width: 80, height: 80 } }),
      ]);
      const coverPng = await download(cover.thumbnailUrl);
      expect(await sharp(coverPng).metadata()).toMatchObject({ width: 60, height: 60 });
      // Cropped at the sides: the centre column is at the red/blue border, the edges are red and blue.
      expect((await rgbAt(coverPng, 2, 30)).slice(0, 3)).toEqual([255, 0, 0]);
      expect((await rgbAt(coverPng, 57, 30)).slice(0, 3)).toEqual([0, 0, 255]);
      const containPng = await download(contain.thumbnailUrl);
      expect(await sharp(containPng).metadata()).toMatchObject({ width: 80, height: 80 });
      // 80 × 60 image centred: 10 px of transparent padding above and below.
      expect((await rgbAt(containPng, 40, 2))[3]).toBe(0);
      expect(await rgbAt(containPng, 5, 40)).toEqual([255, 0, 0, 255]);
      const insideJpeg = await download(inside.thumbnailUrl);
      expect(inside.thumbnailUrl).toMatch(/\.jpeg$|\.jpg$/);
      expect(await sharp(insideJpeg).metadata()).toMatchObject({ format: 'jpeg', width: 80, height: 60 });
    });

    it('not with format pdf or none: 400 naming thumbnail, nothing counted', async () => {
      const fields = await refusedFields([
        { url: `${pages.url}/halves`, format: 'pdf', thumbnail: { width: 100 } },
        { url: `${pages.url}/halves`, format: 'none', extract: ['text'], thumbnail: { width: 100 } },
        { url: `${pages.url}/halves`, thumbnail: { width: 8 } },
        { url: `${pages.url}/halves`, thumbnail: { width: 100, fit: 'fill' } },
      ]);
      for (const named of fields) expect(named.map((f) => f.split('.')[0])).toEqual(['thumbnail']);
    });
  });

  describe('fullPageMaxHeight: a page taller than 16,384 px is captured in sections and stitched', () => {
    const GREEN = [0, 200, 0];

    it('30,000 px with fullPageMaxHeight 65000: the whole page, clipped false, the seam at 16,384 px in place', async () => {
      const job = await capture({ url: `${pages.url}/tall`, width: 300, height: 1000, fullPage: true, fullPageMaxHeight: 65_000 });
      expect(job).toMatchObject({ status: 'done', clipped: false, options: { fullPageMaxHeight: 65_000 } });
      const png = await download(job.url);
      expect(await sharp(png, { limitInputPixels: false }).metadata()).toMatchObject({ format: 'png', width: 300, height: 30_000 });
      const rows: [number, number[]][] = [
        [0, bandColour(0)],
        [15_999, bandColour(15)],
        [16_000, bandColour(16)],
        [16_299, bandColour(16)],
        [16_300, GREEN],
        [16_383, GREEN],
        [16_384, GREEN],
        [16_499, GREEN],
        [16_500, bandColour(16)],
        [16_999, bandColour(16)],
        [17_000, bandColour(17)],
        [29_999, bandColour(29)],
      ];
      for (const [row, colour] of rows) expect([row, (await rgbAt(png, 150, row)).slice(0, 3)]).toEqual([row, colour]);
    });

    it('fullPageMaxHeight 20000 cuts the image there: clipped true', async () => {
      const job = await capture({ url: `${pages.url}/tall`, width: 300, height: 1000, fullPage: true, fullPageMaxHeight: 20_000 });
      expect(job).toMatchObject({ status: 'done', clipped: true });
      const png = await download(job.url);
      expect(await sharp(png, { limitInputPixels: false }).metadata()).toMatchObject({ width: 300, height: 20_000 });
      expect((await rgbAt(png, 10, 16_384)).slice(0, 3)).toEqual(GREEN);
      expect((await rgbAt(png, 10, 19_999)).slice(0, 3)).toEqual(bandColour(19));
    });

    it('by default a full page stops at 16,384 px (clipped true), and the value is checked', async () => {
      const job = await capture({ url: `${pages.url}/tall`, width: 300, height: 1000, fullPage: true });
      expect(job).toMatchObject({ status: 'done', clipped: true });
      expect(await sharp(await download(job.url)).metadata()).toMatchObject({ height: 16_384 });
      for (const fullPageMaxHeight of [99, 65_001, 20_000.5]) {
        const res = await t.request('POST', '/v1/screenshot', {
          key,
          body: { url: `${pages.url}/tall`, fullPage: true, fullPageMaxHeight },
        });
        expect(res.status).toBe(400);
        expect(res.body.details.fields[0].field).toBe('fullPageMaxHeight');
      }
    });
  });

  describe('proxy: requests leave through an EGRESS_PROXIES upstream, after the SSRF guard', () => {
    const site = () => `${PUBLIC}:${pages.port}`;

    it('http and https through CONNECT <ip>:<port> (the checked address, never the name), with its Proxy-Authorization; the page keeps its Host; private targets refused before it', async () => {
      upstream.seen.length = 0;
      proxiedHosts.length = 0;
      const job = await capture({ url: `http://${NAME}:${pages.port}/proxied`, width: 320, height: 200, proxy: 'up' });
      expect(job.error).toBeNull();
      expect(job).toMatchObject({ status: 'done', targetStatus: 200, options: { proxy: 'up' } });
      const lines = upstream.seen.map((f) => f.line);
      // The page, its plain image and its https image: each a tunnel to the address the guard checked.
      expect(lines.length).toBeGreaterThanOrEqual(3);
      expect([...new Set(lines)]).toEqual([`CONNECT ${site()}`]);
      expect(proxiedHosts).toEqual([`${NAME}:${pages.port}`]);
      for (const forwarded of upstream.seen) expect(forwarded.authorization).toBe(AUTHORIZATION);
      // The guard refused the private address: the upstream never heard of it.
      expect(lines.filter((line) => line.includes(`:${internal.port}`))).toEqual([]);
    });

    it('without proxy nothing goes through the upstream', async () => {
      upstream.seen.length = 0;
      expect(await capture({ url: `http://${site()}/halves`, width: 320, height: 200 })).toMatchObject({ status: 'done' });
      expect(upstream.seen).toEqual([]);
    });

    it('an upstream that refuses the credentials fails the job, naming the proxy by its id', async () => {
      const job = await capture({ url: `http://${site()}/halves`, width: 320, height: 200, proxy: 'locked' });
      expect(job).toMatchObject({ status: 'failed' });
      expect(job.error).toContain('upstream proxy locked refused the credentials (HTTP 407)');
    });

    it('a run takes proxy as a session option', async () => {
      upstream.seen.length = 0;
      const res = await t.request('POST', '/v1/runs', { key, body: { url: `http://${site()}/halves`, video: false, proxy: 'up' } });
      expect(res.status).toBe(202);
      expect(await waitForRun(t, key, res.body.id)).toMatchObject({ status: 'completed' });
      expect(upstream.seen.map((f) => f.line)).toContain(`CONNECT ${site()}`);
    });

    it('an unknown id: 400 naming proxy, nothing counted (captures and runs)', async () => {
      const fields = await refusedFields([{ url: `http://${site()}/halves`, proxy: 'nope' }]);
      expect(fields).toEqual([['proxy']]);
      const run = await t.request('POST', '/v1/runs', { key, body: { url: `http://${site()}/halves`, proxy: 'nope' } });
      expect(run.status).toBe(400);
      expect(run.body.details.fields.map((f: { field: string }) => f.field)).toEqual(['proxy']);
    });

    it('the upstream credentials never reach the log', () => {
      const log = readFileSync(t.logFile, 'utf8');
      expect(log.length).toBeGreaterThan(0);
      expect(log).not.toContain(PASSWORD);
      expect(log).not.toContain(AUTHORIZATION.slice(6));
    });
  });
});
