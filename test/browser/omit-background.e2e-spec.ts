import { writeFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { decodePng, DecodedPng, isWebp } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** Where the test writes the images it produces, to look at them. */
const LOOK_DIR = process.env.GLIMPSE_TEST_IMAGE_DIR;

/** RGBA of pixel (x, y); an image without an alpha channel is opaque. */
function rgba(img: DecodedPng, x: number, y: number): [number, number, number, number] {
  const at = (y * img.width + x) * img.channels;
  const d = img.data;
  if (img.channels === 4) return [d[at], d[at + 1], d[at + 2], d[at + 3]];
  if (img.channels === 3) return [d[at], d[at + 1], d[at + 2], 255];
  if (img.channels === 2) return [d[at], d[at], d[at], d[at + 1]];
  return [d[at], d[at], d[at], 255];
}

/** The chunk names of a RIFF/WEBP file (`VP8X`, `ALPH`, `VP8 `, …). */
function webpChunks(webp: Buffer): string[] {
  const names: string[] = [];
  for (let at = 12; at + 8 <= webp.length;) {
    const size = webp.readUInt32LE(at + 4);
    names.push(webp.toString('ascii', at, at + 4));
    at += 8 + size + (size % 2);
  }
  return names;
}

describe('omitBackground (CONTRACT.md, "Capture options, second set")', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    pages = await startPageServer({
      // No background on html or body: only the blue square is painted.
      '/square': `<!doctype html><html><body style="margin:0">
        <div style="position:absolute;left:20px;top:30px;width:100px;height:80px;background:rgb(0,0,255)"></div></body></html>`,
    });
    t = await startTestApp();
    ({ key, accountId } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
  });

  async function jobCount(): Promise<number> {
    const [{ count }] = await t
      .get(DataSource)
      .query('SELECT count(*)::int AS count FROM screenshot_jobs WHERE account_id = $1', [accountId]);
    return count;
  }

  async function capture(options: Record<string, unknown>, lookAs: string): Promise<Buffer> {
    const res = await t.request('POST', '/v1/screenshot', {
      key,
      body: { url: `${pages.url}/square`, width: 320, height: 240, ...options },
    });
    expect(res.status).toBe(202);
    const job = await waitForJob(t, key, res.body.id);
    expect(job).toMatchObject({ status: 'done', error: null });
    const file = await fetch(job.url);
    expect(file.status).toBe(200);
    const data = Buffer.from(await file.arrayBuffer());
    if (LOOK_DIR) writeFileSync(`${LOOK_DIR}/${lookAs}`, data);
    return data;
  }

  it('png: transparent where the page has no background, the square opaque; without the option the background is opaque white', async () => {
    const transparent = decodePng(await capture({ omitBackground: true }, 'omit-background.png'));
    expect(transparent.channels).toBe(4);
    expect(rgba(transparent, 5, 5)[3]).toBe(0);
    expect(rgba(transparent, 300, 200)[3]).toBe(0);
    expect(rgba(transparent, 60, 60)).toEqual([0, 0, 255, 255]);

    const opaque = decodePng(await capture({}, 'with-background.png'));
    expect(rgba(opaque, 5, 5)).toEqual([255, 255, 255, 255]);
    expect(rgba(opaque, 300, 200)).toEqual([255, 255, 255, 255]);
    expect(rgba(opaque, 60, 60)).toEqual([0, 0, 255, 255]);
  });

  it('webp: the image carries an alpha channel only with the option', async () => {
    const transparent = await capture({ format: 'webp', omitBackground: true }, 'omit-background.webp');
    expect(isWebp(transparent)).toBe(true);
    expect(webpChunks(transparent)).toContain('ALPH');
    const opaque = await capture({ format: 'webp' }, 'with-background.webp');
    expect(webpChunks(opaque)).not.toContain('ALPH');
  });

  it.each(['jpeg', 'pdf'])('format %s: 400 VALIDATION_FAILED naming omitBackground, nothing created', async (format) => {
    const before = await jobCount();
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/square`, format, omitBackground: true } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.fields).toContainEqual({
      field: 'omitBackground',
      message: format === 'pdf' ? 'is not allowed with format pdf' : 'is only allowed with format png or webp',
    });
    expect(await jobCount()).toBe(before);
  });

  it('is not a session option: a run refuses it', async () => {
    const res = await t.request('POST', '/v1/runs', { key, body: { url: `${pages.url}/square`, omitBackground: true } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.fields.map((f: { field: string }) => f.field)).toContain('omitBackground');
  });
});
