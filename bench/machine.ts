/**
 * `npm run bench:machine`: what this machine charges for the work the test suite and the captures do
 * (docs/testing.md, "What a run costs"), so runs on two machines can be compared:
 *
 * - the fixed JavaScript loop of the other benchmarks (`fixedLoopMs`, ms): plain CPU speed;
 * - a page fault: the first write to each 4 KiB page of a fresh 256 MiB buffer, µs per page;
 * - a system call: a 1-byte read of `/dev/zero` from Node, µs (libuv's and Node's share included);
 * - a capture in raw Playwright, the script a user would write (a fresh context per capture, `goto`
 *   until `load` on a loopback page, a PNG `page.screenshot`): CPU ms per capture, this process and
 *   Chromium's processes together, with how much of it the kernel spent (system time).
 *
 * The suite's time follows the last figure: most of its CPU is Chromium's. Each figure is the median
 * of BENCH_MACHINE_ROUNDS (3) rounds; the capture round makes BENCH_MACHINE_CAPTURES (20) captures
 * after one to warm up. Run it on a quiet machine; it prints the load average beside the figures.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { chromium } from 'playwright';
import { resolveChromiumExecutable } from '../src/browser/chromium-executable';
import { chromiumChildren, cpuSplitMsOf, descendants, envNumber, loadAverage, percentile, rawCapture } from './bench-support';
import { fixedLoopMs } from './render-hits';

const ROUNDS = envNumber('BENCH_MACHINE_ROUNDS', 3);
const CAPTURES = envNumber('BENCH_MACHINE_CAPTURES', 20);
const PAGE_BYTES = 4096;

/** µs per first write to a page of a fresh buffer of `mib` MiB (the kernel maps each page on that write). */
function pageFaultUs(mib: number): number {
  const buffer = Buffer.allocUnsafeSlow(mib * 1024 * 1024);
  const t0 = performance.now();
  for (let i = 0; i < buffer.length; i += PAGE_BYTES) buffer[i] = 1;
  return ((performance.now() - t0) * 1000) / (buffer.length / PAGE_BYTES);
}

/** µs per 1-byte synchronous read of /dev/zero. */
function systemCallUs(count: number): number {
  const fd = openSync('/dev/zero', 'r');
  const byte = Buffer.alloc(1);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) readSync(fd, byte, 0, 1, null);
  const us = ((performance.now() - t0) * 1000) / count;
  closeSync(fd);
  return us;
}

/** CPU ms per raw Playwright capture of `url` (this process and Chromium's), and the kernel's part of it. */
async function captureCpuMs(url: string, count: number): Promise<{ total: number; system: number }> {
  const browser = await chromium.launch({ executablePath: resolveChromiumExecutable(null), headless: true, args: ['--no-sandbox'] });
  const captureOne = () => rawCapture(browser, url);
  try {
    await captureOne();
    // The browser is a child of this process; its renderers end and are reaped inside its tree.
    const roots = chromiumChildren();
    const now = () => {
      const chromium = cpuSplitMsOf(roots.flatMap((root) => descendants(root)));
      const own = process.cpuUsage();
      return { user: chromium.user + own.user / 1000, system: chromium.system + own.system / 1000 };
    };
    const before = now();
    for (let i = 0; i < count; i++) await captureOne();
    const after = now();
    const system = after.system - before.system;
    return { total: (after.user - before.user + system) / count, system: system / count };
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const html = `<!doctype html><html><body><h1>Machine</h1><p>${'Lorem ipsum dolor sit amet. '.repeat(40)}</p></body></html>`;
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  console.log(`[machine] load ${loadAverage()}; ${ROUNDS} rounds, ${CAPTURES} captures a round`);
  const rows: { loop: number; fault: number; call: number; capture: number; system: number }[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const capture = await captureCpuMs(url, CAPTURES);
      rows.push({
        loop: fixedLoopMs(),
        fault: pageFaultUs(256),
        call: systemCallUs(200_000),
        capture: capture.total,
        system: capture.system,
      });
    }
  } finally {
    server.close();
  }
  const median = (key: keyof (typeof rows)[0]) =>
    percentile(
      rows.map((r) => r[key]),
      50,
    );
  const range = (key: keyof (typeof rows)[0], digits: number) =>
    `${median(key).toFixed(digits)} (${Math.min(...rows.map((r) => r[key])).toFixed(digits)}–${Math.max(...rows.map((r) => r[key])).toFixed(digits)})`;
  console.log(`fixed JavaScript loop, ms                       ${range('loop', 0)}`);
  console.log(`page fault (first write to a 4 KiB page), µs   ${range('fault', 2)}`);
  console.log(`system call (1-byte read of /dev/zero), µs     ${range('call', 2)}`);
  console.log(`raw Playwright capture, CPU ms                  ${range('capture', 0)}, of it the kernel's ${range('system', 0)}`);
  console.log(`[machine] load ${loadAverage()}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
