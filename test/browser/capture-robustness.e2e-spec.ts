import { execFileSync } from 'node:child_process';
import { Client } from 'pg';
import { decodePng, DecodedPng, pixel, pngSize } from '../support/images';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/** Main Chromium processes started by this (jest) process: our own children only. */
function chromiumChildren(): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there is no child
  }
  return out
    .split('\n')
    .filter((line) => /chrom/i.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('capture engine robustness, full page and fonts', () => {
  let t: TestApp;
  let pages: PageServer;
  let key: string;
  let lazyHits = 0;
  let killOnRequest = 0;
  let crashPageRequests = 0;

  beforeAll(async () => {
    pages = await startPageServer({
      '/tall': '<html><body style="margin:0"><div style="height:20000px;background:linear-gradient(red,blue)"></div></body></html>',
      '/lazy': `<html><body style="margin:0"><div style="height:5000px">top</div>
        <img loading="lazy" width="100" height="100" src="/lazy.gif"><div style="height:500px"></div></body></html>`,
      '/lazy.gif': (_req, res) => {
        lazyHits++;
        res
          .writeHead(200, { 'content-type': 'image/gif' })
          .end(Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64'));
      },
      '/never-loads': '<html><body style="margin:0;background:rgb(0,0,255)"><h1>partial</h1><img src="/hang"></body></html>',
      '/hang': () => {
        /* never answers: the load event never fires */
      },
      '/crash': (_req, res) => {
        crashPageRequests++;
        if (killOnRequest > 0) {
          killOnRequest--;
          for (const pid of chromiumChildren()) process.kill(pid, 'SIGKILL');
          return; // the browser is gone; no answer
        }
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>survived</h1>');
      },
      '/cjk':
        '<html><body style="margin:0;background:#fff"><div style="font-size:64px;line-height:80px">漢字かなカナ한글</div></body></html>',
      '/tofu':
        '<html><body style="margin:0;background:#fff"><div style="font-size:64px;line-height:80px">\uE000\uE001\uE002\uE003\uE004\uE005\uE006\uE007</div></body></html>',
      '/emoji': '<html><body style="margin:0;background:#fff"><div style="font-size:64px;line-height:80px">😀🎉🍣</div></body></html>',
    });
    // 6 s: the page that never loads waits that long, and a 16,384 px screenshot (its own CAPTURE_TIMEOUT_MS)
    // took more than 2 s on a 2-core machine busy with the whole suite.
    t = await startTestApp({ env: { CAPTURE_TIMEOUT_MS: '6000', CAPTURE_BROWSER_RECYCLE_AFTER: '3' } });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t?.close();
    await pages.close();
  });

  async function capture(body: Record<string, unknown>) {
    const res = await t.request('POST', '/v1/screenshot', { key, body });
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id);
  }

  async function image(job: { url: string }): Promise<Buffer> {
    return Buffer.from(await (await fetch(job.url)).arrayBuffer());
  }

  it('clips a full page taller than 16,384 px at 16,384 px and says so', async () => {
    const job = await capture({ url: `${pages.url}/tall`, width: 400, height: 300, fullPage: true });
    expect(job).toMatchObject({ status: 'done', fullPage: true, clipped: true });
    expect(pngSize(await image(job))).toEqual({ width: 400, height: 16384 });
  });

  it('scrolls a full page first so lazy images load, and does not flag a page under the cap', async () => {
    const job = await capture({ url: `${pages.url}/lazy`, width: 400, height: 300, fullPage: true });
    expect(job).toMatchObject({ status: 'done', clipped: false });
    expect(lazyHits).toBeGreaterThan(0);
    expect(pngSize(await image(job)).height).toBeGreaterThanOrEqual(5500);
  });

  it('captures the largest viewport of the contract', async () => {
    const job = await capture({ url: `${pages.url}/cjk`, width: 3840, height: 4320, format: 'jpeg' });
    expect(job).toMatchObject({ status: 'done', width: 3840, height: 4320 });
  });

  it('captures a page that never finishes loading at the timeout, since it rendered', async () => {
    const job = await capture({ url: `${pages.url}/never-loads`, width: 200, height: 200 });
    expect(job).toMatchObject({ status: 'done', error: null });
    expect(pixel(decodePng(await image(job)), 150, 190)).toEqual([0, 0, 255]);
  });

  it('renders CJK and colour emoji with real glyphs, not tofu boxes', async () => {
    const size = { width: 700, height: 100 };
    const [cjk, tofu, emoji] = await Promise.all(
      ['/cjk', '/tofu', '/emoji'].map(async (path) => decodePng(await image(await capture({ url: `${pages.url}${path}`, ...size })))),
    );
    const inked = (img: DecodedPng) => {
      let n = 0;
      for (let y = 0; y < img.height; y++) for (let x = 0; x < img.width; x++) if (pixel(img, x, y)[0] < 128) n++;
      return n;
    };
    expect(inked(cjk)).toBeGreaterThan(500);
    expect(cjk.data.equals(tofu.data)).toBe(false);
    // Colour emoji: some strongly saturated pixels (a monochrome or tofu rendering has none).
    let saturated = 0;
    for (let y = 0; y < emoji.height; y++) {
      for (let x = 0; x < emoji.width; x++) {
        const [r, g, b] = pixel(emoji, x, y);
        if (Math.max(r, g, b) - Math.min(r, g, b) > 100) saturated++;
      }
    }
    expect(saturated).toBeGreaterThan(200);
  });

  it('replaces a browser that dies during a capture and retries the job once', async () => {
    killOnRequest = 1;
    crashPageRequests = 0;
    const job = await capture({ url: `${pages.url}/crash`, width: 200, height: 200 });
    expect(job).toMatchObject({ status: 'done', error: null });
    expect(crashPageRequests).toBe(2);
  });

  it('fails the job with a clear error when the browser dies again on the retry', async () => {
    killOnRequest = 2;
    crashPageRequests = 0;
    const job = await capture({ url: `${pages.url}/crash`, width: 200, height: 200 });
    expect(job).toMatchObject({ status: 'failed', error: 'the browser crashed during the capture, twice' });
    expect(crashPageRequests).toBe(2);
  });

  it('recycles the browser after CAPTURE_BROWSER_RECYCLE_AFTER captures', async () => {
    const seen = new Set<number>();
    for (let i = 0; i < 4; i++) {
      expect((await capture({ url: `${pages.url}/cjk`, width: 200, height: 200 })).status).toBe('done');
      for (const pid of chromiumChildren()) seen.add(pid);
    }
    expect(seen.size).toBeGreaterThanOrEqual(2);
    expect(chromiumChildren().length).toBeLessThanOrEqual(2);
  });

  it('on shutdown finishes the capture in flight and leaves no Chromium process', async () => {
    const res = await t.request('POST', '/v1/screenshot', { key, body: { url: `${pages.url}/cjk`, width: 200, height: 200, delay: 1500 } });
    expect(res.status).toBe(202);
    for (let i = 0; i < 200; i++) {
      const job = await t.request('GET', `/v1/screenshot/${res.body.id}`, { key });
      if (job.body.status !== 'pending') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await t.close();
    t = undefined as unknown as TestApp;
    const db = new Client({ connectionString: process.env.GLIMPSE_TEST_DATABASE_URL });
    await db.connect();
    const { rows } = await db.query('SELECT status FROM screenshot_jobs WHERE id = $1', [res.body.id]);
    await db.end();
    expect(rows[0].status).toBe('done');
    expect(chromiumChildren()).toEqual([]);
  });
});
