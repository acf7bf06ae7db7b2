import { isJpeg, isWebp, pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

describe('capture a real page end to end', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;

  beforeAll(async () => {
    pages = await startPageServer({
      '/plain': '<html><body style="background:#fff"><h1>Hello</h1></body></html>',
      '/tall': '<html><body style="margin:0"><div style="height:3000px;background:linear-gradient(red,blue)"></div></body></html>',
      '/late-colour':
        '<html><body style="margin:0;background:rgb(255,0,0)"><script>setTimeout(()=>{document.body.style.background="rgb(0,0,255)"},3000)</script></body></html>',
      '/hang': () => {
        /* never answers */
      },
    });
    t = await startTestApp({ env: { CAPTURE_TIMEOUT_MS: '5000' } });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t.close();
    await pages.close();
  });

  async function capture(body: Record<string, unknown>) {
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'pending', url: null, error: null });
    expect(res.body.id).toMatch(/^scr_[0-9A-Za-z]{24}$/);
    const job = await waitForJob(t, key, res.body.id);
    return job;
  }

  async function download(url: string) {
    const res = await fetch(url);
    return { status: res.status, contentType: res.headers.get('content-type'), data: Buffer.from(await res.arrayBuffer()) };
  }

  it('moves pending → done and serves a PNG of the requested viewport without an API key', async () => {
    const job = await capture({ url: `${pages.url}/plain`, width: 800, height: 600 });
    expect(job).toMatchObject({ status: 'done', error: null, format: 'png', width: 800, height: 600, fullPage: false });
    expect(job.url).toMatch(new RegExp(`^${t.baseUrl}/files/[A-Za-z0-9_-]{43}\\.png$`));
    expect(new Date(job.completedAt).getTime()).toBeGreaterThanOrEqual(new Date(job.createdAt).getTime());
    const file = await download(job.url);
    expect(file.status).toBe(200);
    expect(file.contentType).toBe('image/png');
    expect(pngSize(file.data)).toEqual({ width: 800, height: 600 });
  });

  it('applies the defaults 1280×800 png', async () => {
    const job = await capture({ url: `${pages.url}/plain` });
    expect(job).toMatchObject({ status: 'done', format: 'png', width: 1280, height: 800, fullPage: false });
    expect(pngSize((await download(job.url)).data)).toEqual({ width: 1280, height: 800 });
  });

  it('produces JPEG and WebP with their content types', async () => {
    const jpeg = await capture({ url: `${pages.url}/plain`, format: 'jpeg' });
    const jpegFile = await download(jpeg.url);
    expect(jpeg.url).toMatch(/\.jpeg$/);
    expect(jpegFile.contentType).toBe('image/jpeg');
    expect(isJpeg(jpegFile.data)).toBe(true);

    const webp = await capture({ url: `${pages.url}/plain`, format: 'webp' });
    const webpFile = await download(webp.url);
    expect(webpFile.contentType).toBe('image/webp');
    expect(isWebp(webpFile.data)).toBe(true);
  });

  it('captures the whole page with fullPage', async () => {
    const job = await capture({ url: `${pages.url}/tall`, width: 800, height: 600, fullPage: true });
    const size = pngSize((await download(job.url)).data);
    expect(size.width).toBe(800);
    expect(size.height).toBeGreaterThanOrEqual(3000);
  });

  it('honours delay: a page that turns blue 3 s after its script ran is captured red without delay, blue with delay 3200', async () => {
    const { inflateSync } = await import('node:zlib');
    const firstPixel = (png: Buffer) => {
      // Concatenate IDAT chunks, inflate, skip the filter byte of row 0 (filter 0 or 1 keeps pixel 0 raw).
      const chunks: Buffer[] = [];
      for (let at = 8; at < png.length;) {
        const len = png.readUInt32BE(at);
        if (png.toString('ascii', at + 4, at + 8) === 'IDAT') chunks.push(png.subarray(at + 8, at + 8 + len));
        at += len + 12;
      }
      const raw = inflateSync(Buffer.concat(chunks));
      return [raw[1], raw[2], raw[3]];
    };
    const early = await capture({ url: `${pages.url}/late-colour`, width: 200, height: 200 });
    const late = await capture({ url: `${pages.url}/late-colour`, width: 200, height: 200, delay: 3200 });
    expect(firstPixel((await download(early.url)).data)).toEqual([255, 0, 0]);
    expect(firstPixel((await download(late.url)).data)).toEqual([0, 0, 255]);
  });

  it('fails a job whose host refuses connections, with the browser error', async () => {
    const closed = await startPageServer({});
    const url = closed.url;
    await closed.close();
    const job = await capture({ url: `${url}/` });
    expect(job.status).toBe('failed');
    expect(job.url).toBeNull();
    expect(job.error).toBe('net::ERR_CONNECTION_REFUSED');
  });

  it('fails a job whose page never answers at the navigation timeout', async () => {
    const job = await capture({ url: `${pages.url}/hang` });
    expect(job).toMatchObject({ status: 'failed', error: 'navigation timed out after 5000 ms' });
  });

  it('answers 404 for an unknown result file', async () => {
    const res = await fetch(`${t.baseUrl}/files/${'a'.repeat(43)}.png`);
    expect(res.status).toBe(404);
  });
});
