/*
 * Browser session run figures (docs/runs.md#cost): wall time of a three-step run (fill, click, waitForUrl) with
 * and without video, and the CPU the video costs (ffmpeg's CPU time, read from this process's reaped
 * children, plus Chromium's screencast overhead measured as the difference in wall time). Drives the
 * step executor directly on Debian's Chromium against a page served on 127.0.0.1.
 * Run: npx ts-node --transpile-only -P tsconfig.json bench/runs.ts   (BENCH_RUNS, default 10)
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { chromium } from 'playwright';
import { resolveChromiumExecutable } from '../src/browser/chromium-executable';
import { loadConfig } from '../src/config/app-config';
import { runSession } from '../src/runs/run-session';
import { RunStep } from '../src/runs/run-steps';

const RUNS = Number(process.env.BENCH_RUNS ?? 10);

/** CPU ms of this process's reaped children (cutime + cstime), from /proc/self/stat. */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

async function main() {
  const config = loadConfig(process.env);
  const server = createServer((req, res) => {
    const html = req.url?.startsWith('/welcome')
      ? '<!doctype html><title>Welcome</title><h1>Welcome</h1>'
      : '<!doctype html><title>Sign in</title><form action="/welcome"><input id="user" name="user"><button id="go">Go</button></form>';
    res.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/login`;
  const browser = await chromium.launch({
    executablePath: resolveChromiumExecutable(config.chromiumPath),
    args: ['--no-sandbox', '--disable-gpu'],
  });
  const steps: RunStep[] = [
    { action: 'fill', selector: '#user', value: 'ada' },
    { action: 'click', selector: '#go' },
    { action: 'waitForUrl', url: '**/welcome*' },
    // BENCH_WAIT_MS > 0 adds a still page at the end: the steady-state encoding cost per video second.
    ...(Number(process.env.BENCH_WAIT_MS ?? 0) > 0 ? [{ action: 'wait' as const, ms: Number(process.env.BENCH_WAIT_MS) }] : []),
  ];
  for (const video of [false, true, false, true]) {
    const times: number[] = [];
    const cpu0 = childrenCpuMs();
    let videoMs = 0;
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const started = performance.now();
      const outcome = await runSession(
        page,
        {
          url,
          steps,
          timeoutMs: 60_000,
          navigationTimeoutMs: 30_000,
          video: video ? { ffmpegPath: config.ffmpegPath, width: 1280, height: 800 } : null,
          sensitiveValues: [],
          imageCap: { deviceScale: 1, maxPixels: config.maxImagePixels },
        },
        { saveScreenshot: async () => 'unused' },
      );
      times.push(performance.now() - started);
      if (outcome.failure) throw new Error(outcome.failure.message);
      videoMs += outcome.video?.durationMs ?? 0;
      await outcome.video?.dispose();
      await context.close();
    }
    const cpu = childrenCpuMs() - cpu0;
    times.sort((a, b) => a - b);
    const p50 = times[Math.floor(times.length / 2)];
    process.stdout.write(
      `three-step run, video ${video ? 'on ' : 'off'}: p50 ${p50.toFixed(0)} ms, min ${times[0].toFixed(0)} ms, max ${times[times.length - 1].toFixed(0)} ms` +
        (video
          ? `; ffmpeg CPU ${(cpu / RUNS).toFixed(0)} ms per run, ${((cpu / videoMs) * 1000).toFixed(0)} ms per video second (1280×800 VP8, 10 fps)`
          : '') +
        '\n',
    );
  }
  await browser.close();
  server.close();
}

void main();
