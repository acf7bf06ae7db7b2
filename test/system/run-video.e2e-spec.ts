import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Browser } from 'playwright';
import { loadConfig } from '../../src/config/app-config';
import { ScreencastRecorder } from '../../src/recording/screencast-recorder';
import { PageServer, startPageServer } from '../support/page-server';
import { isWebm, probeVideo } from '../support/video';
import { launchTestBrowser } from '../support/test-browser';

/** The recorder on its own, making a run's video, against Debian's Chromium and ffmpeg and a page served on loopback. */
describe("ScreencastRecorder (a run's video)", () => {
  const config = loadConfig(process.env);
  let browser: Browser;
  let pages: PageServer;

  beforeAll(async () => {
    pages = await startPageServer({
      '/still': '<html><body style="margin:0;background:#2a6"><h1>A page that never repaints</h1></body></html>',
      '/ticking':
        '<html><body><h1 id="n">0</h1><script>let i=0;setInterval(()=>{document.getElementById("n").textContent=++i},100)</script></body></html>',
    });
    browser = await launchTestBrowser(config);
  });

  afterAll(async () => {
    await browser.close();
    await pages.close();
  });

  async function record(path: string, width: number, height: number, ms: number, scale = 1) {
    const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: scale });
    const page = await context.newPage();
    try {
      const started = Date.now();
      const recorder = await ScreencastRecorder.start(page, {
        width,
        height,
        output: { encoding: 'run-webm', ffmpegPath: config.ffmpegPath },
      });
      await page.goto(pages.url + path);
      await new Promise((r) => setTimeout(r, ms - (Date.now() - started)));
      const recording = await recorder.stop();
      return { recording, elapsedMs: Date.now() - started };
    } finally {
      await context.close();
    }
  }

  it('makes a WebM at the viewport size lasting as long as the recording, also when the page never repaints', async () => {
    const { recording } = await record('/still', 640, 360, 3000);
    try {
      const file = readFileSync(recording.path);
      expect(isWebm(file)).toBe(true);
      const probe = await probeVideo(recording.path);
      expect(probe).toMatchObject({ codec: 'vp8', width: 640, height: 360 });
      expect(probe.durationS).toBeGreaterThan(2.7);
      expect(probe.durationS).toBeLessThan(3.6);
      expect(recording.durationMs / 1000).toBeCloseTo(probe.durationS, 0);
    } finally {
      await recording.dispose();
    }
  });

  it('keeps odd viewport sizes and a scaled page at the viewport size', async () => {
    for (const [w, h, scale] of [
      [801, 601, 1],
      [500, 300, 2],
    ]) {
      const { recording } = await record('/ticking', w, h, 1500, scale);
      try {
        expect(await probeVideo(recording.path)).toMatchObject({ width: w, height: h });
      } finally {
        await recording.dispose();
      }
    }
  });

  it('leaves no ffmpeg behind when aborted', async () => {
    const context = await browser.newContext({ viewport: { width: 320, height: 240 } });
    const page = await context.newPage();
    const recorder = await ScreencastRecorder.start(page, {
      width: 320,
      height: 240,
      output: { encoding: 'run-webm', ffmpegPath: config.ffmpegPath },
    });
    await page.goto(pages.url + '/ticking');
    await recorder.abort();
    await context.close();
    const children = execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)]).toString();
    expect(children).not.toMatch(/ffmpeg/);
  });
});
