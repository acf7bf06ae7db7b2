import sharp from 'sharp';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/**
 * thumbnail, fullPageMaxHeight and proxy (CONTRACT.md, "Capture options, second set"): the stored
 * thumbnail decoded, a stitched tall page read at its seams, and what a loopback upstream proxy saw.
 */
describe('capture options, second set: thumbnail, fullPageMaxHeight, proxy', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;

  beforeAll(async () => {
    pages = await startPageServer({
      // 400 × 300 viewport: left half red, right half blue.
      '/halves': `<!doctype html><html><body style="margin:0">
        <div style="position:absolute;left:0;top:0;width:200px;height:300px;background:rgb(255,0,0)"></div>
        <div style="position:absolute;left:200px;top:0;width:200px;height:300px;background:rgb(0,0,255)"></div></body></html>`,
    });
    t = await startTestApp();
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
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

  /** Captures left this month (X-RateLimit-Remaining): unchanged when nothing was counted. */
  async function remaining(): Promise<number> {
    return Number((await t.request('GET', '/v1/screenshots', { key })).headers.get('x-ratelimit-remaining'));
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
      const before = await remaining();
      expect(before).toBeGreaterThan(0);
      for (const body of [
        { url: `${pages.url}/halves`, format: 'pdf', thumbnail: { width: 100 } },
        { url: `${pages.url}/halves`, format: 'none', extract: ['text'], thumbnail: { width: 100 } },
        { url: `${pages.url}/halves`, thumbnail: { width: 8 } },
        { url: `${pages.url}/halves`, thumbnail: { width: 100, fit: 'fill' } },
      ]) {
        const res = await t.request('POST', '/v1/screenshot', { key, body });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('VALIDATION_FAILED');
        expect(res.body.details.fields.map((f: { field: string }) => f.field.split('.')[0])).toEqual(['thumbnail']);
      }
      expect(await remaining()).toBe(before);
    });
  });
});
