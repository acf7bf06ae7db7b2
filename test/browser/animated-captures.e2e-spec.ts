import { createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodePng, pixel, pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';
import { probeVideo, VideoProbe, videoFrame } from '../support/video';

/** Height of the striped page, CSS px: its grey level encodes the y position (0 at the top, 255 at the bottom). */
const PAGE_HEIGHT = 4000;
/** The viewport of every capture here, CSS px. */
const WIDTH = 320;
const HEIGHT = 200;

/**
 * Animated captures (CONTRACT.md, "Animated captures"; docs/animated-captures.md): the files ffprobe reads
 * (codec, pixel format, size, duration within one frame, frame rate), what the frames show of a page whose
 * grey level encodes the y position, the GIF size cap's fallbacks, the poster, Range answers, render links
 * and the refusals. Animations are 1–2 s at low frame rates, so the file stays quick.
 */
describe('animated captures', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let accountId: string;
  let dir: string;

  beforeAll(async () => {
    // 80 bands of 50 px, each a grey whose level is its middle's y position: level = 255 × y / PAGE_HEIGHT.
    const bands = Array.from({ length: PAGE_HEIGHT / 50 }, (_, i) => {
      const level = Math.round((255 * (i * 50 + 25)) / PAGE_HEIGHT);
      return `<div style="height:50px;background:rgb(${level},${level},${level})"></div>`;
    }).join('');
    // Noise no encoder can shrink: a canvas of random pixels `width` px wide, beside a white page.
    const noise = (width: number) => `<!doctype html><html><body style="margin:0;background:#fff">
      <canvas id="c" width="${width}" height="${PAGE_HEIGHT}" style="display:block"></canvas><script>
      const c = document.getElementById('c').getContext('2d'); const img = c.createImageData(${width}, ${PAGE_HEIGHT});
      for (let i = 0; i < img.data.length; i++) img.data[i] = i % 4 === 3 ? 255 : Math.random() * 256;
      c.putImageData(img, 0, 0);</script></body></html>`;
    pages = await startPageServer({
      '/striped': `<!doctype html><html><body style="margin:0">${bands}</body></html>`,
      '/noise-60': noise(60),
      '/noise': noise(WIDTH),
    });
    t = await startTestApp();
    ({ key, accountId } = await t.createKey());
    dir = mkdtempSync(join(tmpdir(), 'glimpse-animated-'));
  });

  afterAll(async () => {
    await t?.close();
    await pages?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function capture(app: TestApp, apiKey: string, body: Record<string, unknown>): Promise<any> {
    const res = await app.request('POST', '/v1/screenshot', { key: apiKey, body: { width: WIDTH, height: HEIGHT, ...body } });
    expect(res.status).toBe(202);
    return waitForJob(app, apiKey, res.body.id, 60_000);
  }

  /** Downloads `url` into the test's directory as `name`; returns its path and bytes. */
  async function download(url: string, name: string): Promise<{ path: string; data: Buffer }> {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const data = Buffer.from(await res.arrayBuffer());
    const path = join(dir, name);
    writeFileSync(path, data);
    return { path, data };
  }

  /** The grey level (0–255) at the middle of frame `index`: where the page was, 255 × y / PAGE_HEIGHT. */
  async function levelAt(path: string, index: number): Promise<number> {
    const [r, g, b] = pixel(decodePng(await videoFrame(path, index)), WIDTH / 2, HEIGHT / 2);
    return (r + g + b) / 3;
  }

  /** The grey level of the page's middle row when the page is scrolled to `y` (CSS px). */
  const levelOfScroll = (y: number) => (255 * (y + HEIGHT / 2)) / PAGE_HEIGHT;

  /** Duration within one frame of `expectedMs`, at the stream's frame rate. */
  function expectDuration(probe: VideoProbe, expectedMs: number, fps: number): void {
    expect(Math.abs(probe.durationS * 1000 - expectedMs)).toBeLessThanOrEqual(1000 / fps + 1);
  }

  it('mp4: H.264 yuv420p at the viewport size, as long as the options say at their frame rate, scrolling top to bottom', async () => {
    const job = await capture(t, key, {
      url: `${pages.url}/striped`,
      format: 'mp4',
      animation: { durationMs: 2000, fps: 10, startDelayMs: 0, pauseAtEndMs: 0, easing: 'linear' },
    });
    expect(job).toMatchObject({ status: 'done', format: 'mp4' });
    expect(job.url).toMatch(/\.mp4$/);
    expect(job.thumbnailUrl).toMatch(/\.png$/);
    const { path, data } = await download(job.url, 'scroll.mp4');
    // +faststart: the index (moov) comes before the frames (mdat).
    expect(data.indexOf('moov')).toBeLessThan(data.indexOf('mdat'));
    const probe = await probeVideo(path);
    expect(probe).toMatchObject({ codec: 'h264', pixelFormat: 'yuv420p', width: WIDTH, height: HEIGHT, fps: 10 });
    expectDuration(probe, 2000, 10);

    const bottom = PAGE_HEIGHT - HEIGHT;
    const first = await levelAt(path, 0);
    const middle = await levelAt(path, Math.floor(probe.frames / 2));
    const last = await levelAt(path, probe.frames - 1);
    expect(first).toBeLessThan(levelOfScroll(0) + 12);
    expect(Math.abs(middle - levelOfScroll(bottom / 2))).toBeLessThan(30);
    // The last frame shows the page at its own time, 1.9 s of 2 s (95 % of the way down, linear), give or take a frame.
    expect(last).toBeGreaterThan(levelOfScroll(bottom * 0.85));

    // The poster is the first frame, as PNG, at the viewport's size.
    const poster = Buffer.from(await (await fetch(job.thumbnailUrl)).arrayBuffer());
    expect(pngSize(poster)).toEqual({ width: WIDTH, height: HEIGHT });
    const [r] = pixel(decodePng(poster), WIDTH / 2, HEIGHT / 2);
    expect(Math.abs(r - first)).toBeLessThan(12);

    // The video answers Range requests, so <video> can seek.
    const part = await fetch(job.url, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('accept-ranges')).toBe('bytes');
    expect(part.headers.get('content-type')).toBe('video/mp4');
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${data.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(data.subarray(100, 200));
    const beyond = await fetch(job.url, { headers: { range: `bytes=${data.length + 10}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${data.length}`);
  });

  it('webm: VP9; start delay, scroll back and pause at the end add up, the last frame back at the top', async () => {
    const animation = { durationMs: 1000, fps: 8, startDelayMs: 250, pauseAtEndMs: 250, scrollBack: true, scrollTo: 1000 };
    const job = await capture(t, key, { url: `${pages.url}/striped`, format: 'webm', animation });
    expect(job.status).toBe('done');
    expect(job.url).toMatch(/\.webm$/);
    const { path } = await download(job.url, 'back.webm');
    const probe = await probeVideo(path);
    expect(probe).toMatchObject({ codec: 'vp9', pixelFormat: 'yuv420p', width: WIDTH, height: HEIGHT, fps: 8 });
    expectDuration(probe, 250 + 1000 + 1000 + 250, 8);
    const top = await levelAt(path, 0);
    // Half way (after the delay and the scroll down): at scrollTo, 1000 px.
    const turn = await levelAt(path, Math.round(((250 + 1000) * 8) / 1000));
    expect(Math.abs(turn - levelOfScroll(1000))).toBeLessThan(20);
    expect(Math.abs((await levelAt(path, probe.frames - 1)) - top)).toBeLessThan(8);
  });

  it('gif: its own palette at 12 fps by default; thumbnail as the option asks', async () => {
    const job = await capture(t, key, {
      url: `${pages.url}/striped`,
      format: 'gif',
      animation: { durationMs: 1000, startDelayMs: 0, pauseAtEndMs: 0 },
      thumbnail: { width: 160 },
    });
    expect(job.status).toBe('done');
    const { path, data } = await download(job.url, 'scroll.gif');
    expect(data.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    const probe = await probeVideo(path);
    expect(probe).toMatchObject({ codec: 'gif', width: WIDTH, height: HEIGHT });
    expect(probe.frames).toBeGreaterThanOrEqual(11);
    expect(probe.frames).toBeLessThanOrEqual(13);
    expectDuration(probe, 1000, 12);
    expect(await levelAt(path, 0)).not.toBeCloseTo(await levelAt(path, probe.frames - 1), 0);
    const thumb = Buffer.from(await (await fetch(job.thumbnailUrl)).arrayBuffer());
    expect(pngSize(thumb)).toEqual({ width: 160, height: 100 });
  });

  it('a GIF over GIF_MAX_BYTES is encoded again smaller (test/system/animation-encoding.e2e-spec.ts has each step); still over, the job fails', async () => {
    const small = await startTestApp({ env: { GIF_MAX_BYTES: '65536' } });
    try {
      const { key: smallKey } = await small.createKey();
      const animation = { durationMs: 1000, fps: 12, startDelayMs: 0, pauseAtEndMs: 0 };
      // About 1.9 bytes per pixel of noise per frame: 60 px × 200 px at 12 fps is well over 64 KiB.
      const smaller = await capture(small, smallKey, { url: `${pages.url}/noise-60`, format: 'gif', animation });
      expect(smaller.status).toBe('done');
      const { path, data } = await download(smaller.url, 'smaller.gif');
      expect(data.length).toBeLessThanOrEqual(65536);
      const probe = await probeVideo(path);
      expect(probe.fps < 12 || probe.width < WIDTH).toBe(true);
      expectDuration(probe, 1000, 6);

      const noisy = await capture(small, smallKey, { url: `${pages.url}/noise`, format: 'gif', animation });
      expect(noisy).toMatchObject({ status: 'failed', error: 'animation larger than 65536 bytes', url: null });
    } finally {
      await small.close();
    }
  });

  it('batches and uploads take format and animation too (an upload as form fields, animation as JSON text)', async () => {
    const animation = { durationMs: 1000, fps: 5, startDelayMs: 0, pauseAtEndMs: 0 };
    const batch = await t.request('POST', '/v1/screenshot/batch', {
      key,
      body: {
        items: [{ url: `${pages.url}/striped`, width: WIDTH, height: HEIGHT, format: 'gif', animation }, { url: `${pages.url}/striped` }],
      },
    });
    expect(batch.status).toBe(202);
    const [gif, png] = await Promise.all(batch.body.data.map((j: { id: string }) => waitForJob(t, key, j.id, 60_000)));
    expect(gif).toMatchObject({ status: 'done', format: 'gif' });
    expect(png).toMatchObject({ status: 'done', format: 'png' });
    const refused = await t.request('POST', '/v1/screenshot/batch', {
      key,
      body: { items: [{ url: `${pages.url}/striped` }, { url: `${pages.url}/striped`, animation }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.fields).toContainEqual({
      field: 'items[1].animation',
      message: 'is only allowed with format mp4 or webm or gif',
    });

    const form = new FormData();
    form.append('format', 'webm');
    form.append('width', String(WIDTH));
    form.append('height', String(HEIGHT));
    form.append('animation', JSON.stringify(animation));
    form.append(
      'file',
      new Blob([`<!doctype html><body style="margin:0;height:3000px;background:linear-gradient(#000,#fff)">`], { type: 'text/html' }),
      'page.html',
    );
    const uploaded = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(uploaded.status).toBe(202);
    const job = await waitForJob(t, key, ((await uploaded.json()) as { id: string }).id, 60_000);
    expect(job).toMatchObject({ status: 'done', format: 'webm' });
    const { path } = await download(job.url, 'upload.webm');
    expect(await probeVideo(path)).toMatchObject({ codec: 'vp9', width: WIDTH, height: HEIGHT, fps: 5 });
  });

  it('a render link .gif renders once, then answers from the cache with the same ETag', async () => {
    const rk = (await t.request('POST', '/v1/render-keys', { key, body: {} })).body;
    const params = { url: `${pages.url}/striped?link`, width: '200', height: '120', animation: '{"durationMs":1000,"fps":5}' };
    const path = `/v1/render/${rk.id}.gif`;
    const canonical = Object.entries(params)
      .map(([n, v]) => [encodeURIComponent(n), encodeURIComponent(v)])
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([n, v]) => `${n}=${v}`)
      .join('&');
    const signature = createHmac('sha256', rk.secret).update(`GET\n${path}\n${canonical}`).digest('hex');
    const link = `${t.baseUrl}${path}?${canonical}&signature=${signature}`;
    const [first, second] = await Promise.all([fetch(link), fetch(link)]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('content-type')).toBe('image/gif');
    expect(first.headers.get('x-glimpse-job-id')).toBe(second.headers.get('x-glimpse-job-id'));
    const body = Buffer.from(await first.arrayBuffer());
    expect(body.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    const again = await fetch(link);
    expect(again.headers.get('x-glimpse-cache')).toBe('HIT');
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    const file = join(dir, 'link.gif');
    writeFileSync(file, Buffer.from(await again.arrayBuffer()));
    expect(await probeVideo(file)).toMatchObject({ codec: 'gif', width: 200, height: 120 });
  });

  it.each([
    [{ format: 'png', animation: { durationMs: 1000 } }, 'animation', 'is only allowed with format mp4 or webm or gif'],
    [{ format: 'mp4', extract: ['markdown'] }, 'extract', 'is not allowed with format mp4'],
    [{ format: 'gif', mask: ['h1'] }, 'mask', 'is not allowed with format gif'],
    [{ format: 'webm', pdf: { paper: 'A4' } }, 'pdf', 'is not allowed with format webm'],
    [{ format: 'mp4', fullPage: true }, 'fullPage', 'is not allowed with format mp4'],
    [{ format: 'mp4', animation: { fps: 60 } }, 'animation.fps', 'must be at most 30'],
    [{ format: 'mp4', animation: { durationMs: 500 } }, 'animation.durationMs', 'must be at least 1000'],
    [{ format: 'mp4', animation: { scrollTo: 'top' } }, 'animation.scrollTo', 'must be "bottom" or an integer'],
  ])('refuses %j: 400 naming %s, nothing created', async (body, field, message) => {
    const jobs = async () =>
      (await t.get(DataSource).query('SELECT count(*)::int AS n FROM screenshot_jobs WHERE account_id = $1', [accountId]))[0].n;
    const before = await jobs();
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/striped`, ...body } });
    expect(await jobs()).toBe(before);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    const error = res.body.details.fields.find((f: { field: string }) => f.field === field);
    expect(error?.message).toContain(message);
  });

  it('monitors refuse animations', async () => {
    const base = { url: `${pages.url}/striped`, schedule: { intervalSeconds: 3600 } };
    for (const body of [
      { ...base, format: 'mp4' },
      { ...base, animation: { durationMs: 1000 } },
    ]) {
      const res = await t.request('POST', '/v1/monitors', { key, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('VALIDATION_FAILED');
    }
  });
});
