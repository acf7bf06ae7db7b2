/*
 * Animated capture figures (docs/animated-captures.md#cost): a 5 s scroll of a long loopback page at
 * 1280 × 800 and 25 fps, recorded by the capture's own code (recordAnimation) on Debian's Chromium:
 * - recording wall time against the animation's length;
 * - encoding wall time and ffmpeg's CPU time of MP4, WebM and GIF (GIF at 25 fps too, its worst case),
 *   against the animation's length (targets: MP4 at most 0.5×, GIF at most 1×), and the output sizes,
 *   from reference frames: a screenshot at each frame's scroll position, the frames a recording takes,
 *   shot apart so that the encodings always read the same frames;
 * - peak RSS while encoding: this process (the worker's part) and the ffmpeg processes it started;
 * - wall time and distinct frames of one recording alone and of two recordings at once (the recorder
 *   steps the scroll, so a frame repeated is a position missed: none should be; a busy machine takes
 *   longer instead).
 * Run: npm run bench:animated   (BENCH_DURATION_MS, default 5000; BENCH_FPS, default 25)
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright';
import { resolveChromiumExecutable } from '../src/browser/chromium-executable';
import { scrollPositionAt, scrollTarget, scrollToY } from '../src/browser/page-toolkit';
import { recordAnimation } from '../src/capture/animated-capture';
import type { AnimationOptions } from '../src/capture/capture-options';
import { loadConfig } from '../src/config/app-config';
import { encodeAnimation } from '../src/recording/animation-encoding';
import type { Recording } from '../src/recording/frame-output';
import { envNumber, loadAverage } from './bench-support';

const WIDTH = 1280;
const HEIGHT = 800;
const DURATION_MS = envNumber('BENCH_DURATION_MS', 5000);
const FPS = envNumber('BENCH_FPS', 25);
const VIEWPORT = { width: WIDTH, height: HEIGHT, scale: 1, fullPageMaxHeight: 65_000 };
const ANIMATION: AnimationOptions = {
  scrollTo: 'bottom',
  durationMs: DURATION_MS,
  fps: FPS,
  easing: 'ease-in-out',
  startDelayMs: 0,
  pauseAtEndMs: 0,
  scrollBack: false,
};

/** A long page (20,000 px): headed sections of text on alternating backgrounds, a position label every 100 px. */
function longPage(): string {
  const sections = Array.from({ length: 100 }, (_, i) => {
    const paragraphs = Array.from(
      { length: 3 },
      (_, p) => `<p>Section ${i}, paragraph ${p}: the quick brown fox jumps over the lazy dog, again and again, to fill the line.</p>`,
    ).join('');
    return `<section style="height:200px;padding:8px 24px;box-sizing:border-box;background:hsl(${(i * 37) % 360},60%,88%)"><h2>Section ${i} at ${i * 200} px</h2>${paragraphs}</section>`;
  }).join('');
  return `<!doctype html><html><body style="margin:0;font:16px sans-serif">${sections}</body></html>`;
}

/** Distinct frames of a recording's frames file (a stream of JPEGs, each from SOI FFD8 to EOI FFD9). */
function distinctFrames(recording: Recording): { frames: number; distinct: number } {
  const data = readFileSync(recording.path);
  const hashes = new Set<string>();
  let frames = 0;
  let start = 0;
  for (;;) {
    const end = data.indexOf(Buffer.from([0xff, 0xd9]), start);
    if (end < 0) break;
    hashes.add(
      createHash('sha1')
        .update(data.subarray(start, end + 2))
        .digest('hex'),
    );
    frames++;
    start = end + 2;
  }
  return { frames, distinct: hashes.size };
}

/** CPU ms of this process's reaped children (cutime + cstime, clock ticks of 10 ms), from /proc/self/stat. */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** This process's direct children running ffmpeg, from /proc (no process spawned: `ps` every 50 ms cost more CPU than the encodes' differences). */
function ffmpegChildren(): number[] {
  const pids: number[] = [];
  for (const task of readdirSync('/proc/self/task')) {
    let children = '';
    try {
      children = readFileSync(`/proc/self/task/${task}/children`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    for (const pid of children.split(' ').filter(Boolean).map(Number)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'ffmpeg') pids.push(pid);
      } catch {
        /* ended meanwhile */
      }
    }
  }
  return pids;
}

/** Resident set size of process `pid` (VmRSS), bytes; 0 once it ended. */
function rssBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Peak RSS (MiB) of this process and, summed at each sample (every 50 ms, from /proc), of its ffmpeg children, while `work` runs. */
async function peakRss<T>(work: () => Promise<T>): Promise<{ result: T; ownMiB: number; ffmpegMiB: number }> {
  let own = 0;
  let ffmpeg = 0;
  const sample = () => {
    own = Math.max(own, process.memoryUsage().rss);
    ffmpeg = Math.max(
      ffmpeg,
      ffmpegChildren().reduce((sum, pid) => sum + rssBytes(pid), 0),
    );
  };
  const timer = setInterval(sample, 50);
  try {
    const result = await work();
    sample();
    return { result, ownMiB: own / 2 ** 20, ffmpegMiB: ffmpeg / 2 ** 20 };
  } finally {
    clearInterval(timer);
  }
}

async function record(browser: Browser, url: string, maxLateMs: number): Promise<{ recording: Recording; wallMs: number }> {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: HEIGHT } });
  const page = await context.newPage();
  try {
    await page.goto(url);
    const started = performance.now();
    const recording = await recordAnimation(page, ANIMATION, VIEWPORT, maxLateMs);
    return { recording, wallMs: performance.now() - started };
  } finally {
    await context.close();
  }
}

/**
 * The frames of the animation, taken without the recorder: the page scrolled to each frame's position
 * (scrollPositionAt, as the capture computes it) and shot as JPEG at the screencast's quality, in a frames file.
 */
async function referenceFrames(browser: Browser, url: string): Promise<Recording> {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: HEIGHT } });
  const page = await context.newPage();
  const dir = mkdtempSync(join(tmpdir(), 'glimpse-bench-frames-'));
  try {
    await page.goto(url);
    const toY = await scrollTarget(page, 'bottom', VIEWPORT.fullPageMaxHeight);
    const plan = { toY, durationMs: DURATION_MS, startDelayMs: 0, easing: 'ease-in-out', scrollBack: false } as const;
    const count = Math.round((DURATION_MS * FPS) / 1000);
    const frames: Buffer[] = [];
    for (let i = 0; i < count; i++) {
      await scrollToY(page, scrollPositionAt(plan, (i * 1000) / FPS));
      frames.push(await page.screenshot({ type: 'jpeg', quality: 80 }));
    }
    const path = join(dir, 'frames.mjpeg');
    writeFileSync(path, Buffer.concat(frames));
    const frameOffsets: number[] = [];
    frames.reduce((offset, frame) => (frameOffsets.push(offset), offset + frame.length), 0);
    const dispose = async () => rmSync(dir, { recursive: true, force: true });
    return { path, frames: count, fps: FPS, durationMs: DURATION_MS, firstFrame: frames[0], frameOffsets, dropped: 0, dispose };
  } finally {
    await context.close();
  }
}

async function main() {
  const config = loadConfig(process.env);
  const html = longPage();
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const browser = await chromium.launch({
    executablePath: resolveChromiumExecutable(config.chromiumPath),
    args: ['--no-sandbox', '--disable-gpu'],
  });
  console.log(`animated capture bench: ${WIDTH}×${HEIGHT}, ${DURATION_MS} ms scroll at ${FPS} fps; load ${loadAverage()}`);
  try {
    const alone = await record(browser, url, config.captureTimeoutMs);
    const aloneFrames = distinctFrames(alone.recording);
    console.log(
      `recording: ${alone.wallMs.toFixed(0)} ms wall for ${DURATION_MS} ms (${(alone.wallMs / DURATION_MS).toFixed(2)}×, includes going to the top); ` +
        `${aloneFrames.frames} frames, ${aloneFrames.distinct} distinct`,
    );
    await alone.recording.dispose();
    const reference = await referenceFrames(browser, url);
    console.log(`reference frames: ${distinctFrames(reference).distinct} distinct of ${reference.frames}`);
    for (const format of ['mp4', 'webm', 'gif'] as const) {
      const started = performance.now();
      const cpu0 = childrenCpuMs();
      const { result, ownMiB, ffmpegMiB } = await peakRss(() =>
        encodeAnimation(reference, {
          ffmpegPath: config.ffmpegPath,
          format,
          width: WIDTH,
          height: HEIGHT,
          gifMaxBytes: config.gifMaxBytes,
          passTimeoutMs: 120_000,
        }),
      );
      const ms = performance.now() - started;
      const cpuMs = childrenCpuMs() - cpu0;
      console.log(
        `encode ${format}: ${ms.toFixed(0)} ms wall (${(ms / DURATION_MS).toFixed(2)}× the animation), ffmpeg CPU ${cpuMs} ms ` +
          `(${(cpuMs / DURATION_MS).toFixed(2)}×), ${(result.size / 1024).toFixed(0)} KiB ` +
          `at ${result.fps} fps, scale ${result.scale}; peak RSS: this process ${ownMiB.toFixed(0)} MiB, ffmpeg ${ffmpegMiB.toFixed(0)} MiB`,
      );
    }
    await reference.dispose();

    const pair = await Promise.all([record(browser, url, config.captureTimeoutMs), record(browser, url, config.captureTimeoutMs)]);
    for (const [i, { recording, wallMs }] of pair.entries()) {
      const { frames, distinct } = distinctFrames(recording);
      console.log(
        `two at once, recording ${i + 1}: ${wallMs.toFixed(0)} ms wall (${(wallMs / DURATION_MS).toFixed(2)}×); ${frames} frames, ${distinct} distinct`,
      );
      await recording.dispose();
    }
    console.log(`load after: ${loadAverage()}`);
  } finally {
    await browser.close();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
