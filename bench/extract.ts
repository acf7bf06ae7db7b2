/*
 * Extraction cost over the capture alone (docs/extract.md, "Cost"): on the benchmark pages (simple
 * and Swagger UI, from bench/page-sites.js), each kind of `extract` separately and markdown +
 * metadata together, the added wall-clock ms (p50, p95) of the in-page extraction and the CPU ms it
 * costs the page's renderer (DevTools `Performance.getMetrics` TaskDuration) and the worker process
 * (process.cpuUsage). Then a page of about 6 MiB of text: the worker's RSS and heap growth while its
 * markdown and text are extracted (cut at the 5 MiB caps in the page).
 *
 *   npx ts-node --transpile-only -P tsconfig.json bench/extract.ts   (RUNS=20 by default)
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { CDPSession, chromium } from 'playwright';
import { resolveChromiumExecutable } from '../src/browser/chromium-executable';
import { extractInPage } from '../src/extract/in-page-extractor';
import { ExtractKind } from '../src/results/extracted';

const RUNS = Number(process.env.RUNS || 20);

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function pageSites(): Promise<{ simple: string[]; spa: string[] }> {
  const child = spawn(process.execPath, [`${__dirname}/page-sites.js`], {
    env: { ...process.env, SITES: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  process.on('exit', () => child.kill());
  return JSON.parse(line.toString().split('\n')[0]);
}

/** Seconds the page's renderer spent on tasks so far (DevTools `Performance.getMetrics`, enabled on `cdp`). */
async function taskSeconds(cdp: CDPSession): Promise<number> {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;
}

async function main(): Promise<void> {
  const sites = await pageSites();
  const browser = await chromium.launch({ executablePath: resolveChromiumExecutable(null) });
  const variants: { label: string; kinds: ExtractKind[] }[] = [
    ...(['markdown', 'metadata', 'links', 'text', 'html'] as const).map((k) => ({ label: k, kinds: [k] })),
    { label: 'markdown+metadata', kinds: ['markdown', 'metadata'] },
  ];
  for (const [name, urls] of [
    ['simple', sites.simple],
    ['swagger-ui', sites.spa],
  ] as const) {
    for (const variant of variants) {
      const wall: number[] = [];
      const renderer: number[] = [];
      const worker: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const context = await browser.newContext();
        const page = await context.newPage();
        const cdp = await context.newCDPSession(page);
        await cdp.send('Performance.enable');
        await page.goto(urls[0], { waitUntil: 'load' });
        if (name === 'swagger-ui') await page.locator('.swagger-ui .info').first().waitFor();
        const tasks0 = await taskSeconds(cdp);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await extractInPage(page, variant.kinds, 'readable');
        wall.push(performance.now() - t0);
        const cpu = process.cpuUsage(cpu0);
        worker.push((cpu.user + cpu.system) / 1000);
        renderer.push(((await taskSeconds(cdp)) - tasks0) * 1000);
        await context.close();
      }
      console.log(
        `${name.padEnd(10)} ${variant.label.padEnd(18)} added ms p50 ${pct(wall, 50).toFixed(1)} p95 ${pct(wall, 95).toFixed(1)}` +
          ` | renderer CPU ms p50 ${pct(renderer, 50).toFixed(1)} | worker CPU ms p50 ${pct(worker, 50).toFixed(1)}`,
      );
    }
  }

  // About 6 MiB of text: markdown and text are cut at 5 MiB in the page; the worker holds at most the caps.
  const big = `<!doctype html><html><head><title>Big</title></head><body>${`<p>${'x'.repeat(1023)}</p>`.repeat(6 * 1024)}</body></html>`;
  const server = createServer((_req, res) => res.end(big)).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${address.port}/`);
  global.gc?.();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
  const t0 = performance.now();
  const content = await extractInPage(page, ['markdown', 'text'], 'full');
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  console.log(
    `6 MiB page: markdown ${Buffer.byteLength(content.markdown!.content)} bytes truncated ${content.markdown!.truncated}, ` +
      `text ${Buffer.byteLength(content.text!.content)} bytes truncated ${content.text!.truncated}; ${ms.toFixed(0)} ms; ` +
      `worker peak RSS +${((peakRss - before.rss) / 2 ** 20).toFixed(1)} MiB, heap +${((process.memoryUsage().heapUsed - before.heapUsed) / 2 ** 20).toFixed(1)} MiB`,
  );
  await context.close();
  server.close();
  await browser.close();
  process.exit(0);
}

void main();
