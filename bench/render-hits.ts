/**
 * The render-link hit figures (docs/render-links.md#performance, docs/performance.md), shared by
 * `npm run bench:render` and `npm run bench`: a cached link requested by autocannon at 50 connections,
 * then a bare `node:http` server (a process of its own) sending the same bytes with the same headers
 * from memory, by the same autocannon settings right after, so the ratios hold on a busy machine;
 * then the same link with `If-None-Match` (304 answers). CPU per answer is the process's user + system
 * time from `/proc/<pid>/stat` over the phase, divided by the answers.
 */
import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { processCpuMs, sleep, treeCpuMs } from './bench-support';

/** Connections of every measured autocannon phase (docs/performance.md, "The figures": "at 50 connections"). */
const CONNECTIONS = 50;

/**
 * Milliseconds a fixed JavaScript loop (50 million multiply-modulo steps) takes in this process:
 * printed first, so a reader can tell a quiet machine from a busy one (docs/performance.md gives its
 * time on the quiet machine of the figures).
 */
export function fixedLoopMs(): number {
  const t0 = performance.now();
  let x = 0;
  for (let i = 0; i < 50_000_000; i++) x = (x * 31 + i) % 1_000_003;
  const ms = performance.now() - t0;
  if (x < 0) console.log(x); // keeps the loop from being optimised away
  return ms;
}

/** One autocannon phase: answers per second of the expected status, latency and the server's CPU per answer. */
export interface HitPhase {
  perS: number;
  answers: number;
  /** Answers of another status, and socket errors. */
  other: number;
  errors: number;
  p50: number;
  p99: number;
  /** The server process's own CPU per answer, ms. */
  cpuMsPerAnswer: number;
}

/** The hit figures of one run. */
export interface RenderHitFigures {
  hits: HitPhase;
  bare: HitPhase;
  notModified: HitPhase;
  /** The link's answer size, bytes. */
  bytes: number;
}

/** Runs autocannon on `url` at {@link CONNECTIONS} connections for `seconds`, counting answers of `status` and `pid`'s CPU. */
async function phase(url: string, pid: number, seconds: number, status: number, headers: Record<string, string> = {}): Promise<HitPhase> {
  await autocannon({ url, headers, connections: 10, duration: 2 });
  const cpuBefore = processCpuMs(pid);
  const ac = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds });
  const cpuMs = processCpuMs(pid) - cpuBefore;
  const codes = ac.statusCodeStats as unknown as Record<string, { count: number } | undefined>;
  const answers = codes[String(status)]?.count ?? 0;
  const all = Object.values(codes).reduce((sum, c) => sum + (c?.count ?? 0), 0);
  return {
    perS: answers / seconds,
    answers,
    other: all - answers,
    errors: ac.errors,
    p50: ac.latency.p50,
    p99: ac.latency.p99,
    cpuMsPerAnswer: cpuMs / Math.max(1, all),
  };
}

/**
 * The bare server: `node:http` answering every request with `body` and `headers` from memory, in a
 * process of its own (as the service is). Resolves with the process and its URL.
 */
async function startBareServer(body: Buffer, headers: Record<string, string>, dir: string): Promise<{ proc: ChildProcess; url: string }> {
  const bodyFile = join(dir, 'bare-body');
  writeFileSync(bodyFile, body);
  const script = `
    const http = require('node:http');
    const body = require('node:fs').readFileSync(process.env.BARE_BODY);
    const headers = JSON.parse(process.env.BARE_HEADERS);
    const server = http.createServer((req, res) => { res.writeHead(200, headers); res.end(body); });
    server.keepAliveTimeout = 5000;
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  const proc = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, BARE_BODY: bodyFile, BARE_HEADERS: JSON.stringify(headers) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`the bare server exited with ${code}`)));
  });
  return { proc, url: `http://127.0.0.1:${port.trim()}/` };
}

/**
 * Measures a cached render link `link` of the service process `servicePid`: hits, then the bare server
 * with the same bytes and headers (`tmpDir` holds its body file), then 304s, each for `seconds`.
 * Throws when the link does not answer 200 with an `ETag`.
 */
export async function measureRenderHits(link: string, servicePid: number, seconds: number, tmpDir: string): Promise<RenderHitFigures> {
  const res = await fetch(link);
  const body = Buffer.from(await res.arrayBuffer());
  const etag = res.headers.get('etag');
  if (res.status !== 200 || !etag) throw new Error(`the hit link answered ${res.status} (ETag ${etag})`);
  const settledMs = await settle(servicePid);
  console.log(`  (the service and its browser settled ${settledMs.toFixed(0)} ms after the render)`);
  const hits = await phase(link, servicePid, seconds, 200);
  const sameHeaders: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!['date', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) sameHeaders[name] = value;
  });
  const bare = await startBareServer(body, sameHeaders, tmpDir);
  try {
    const bareHits = await phase(bare.url, bare.proc.pid as number, seconds, 200);
    const notModified = await phase(link, servicePid, seconds, 304, { 'if-none-match': etag });
    return { hits, bare: bareHits, notModified, bytes: body.length };
  } finally {
    bare.proc.kill();
  }
}

/** Longest wait for the service to settle after the link's render, ms. */
const SETTLE_MAX_MS = 20_000;

/**
 * Waits until the process tree of `pid` (the service and its Chromium) has used less than 5 % of a
 * core over 500 ms, at most {@link SETTLE_MAX_MS}: the work that follows a render (closing its page,
 * preparing the next) is then not counted as the hits' CPU, nor competing with them. Resolves with
 * the time waited, ms.
 */
async function settle(pid: number): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < SETTLE_MAX_MS) {
    const before = treeCpuMs(pid);
    await sleep(500);
    if (treeCpuMs(pid) - before < 25) break;
  }
  return performance.now() - t0;
}

/** A figure printer: name, measured value, target text, and whether it is met (null: no target). */
export type FigurePrinter = (name: string, value: string, target: string, ok: boolean | null) => void;

/** Prints the render-link hit rows of docs/performance.md, "The figures" (with their targets) through `figure`. */
export function printRenderHitFigures(r: RenderHitFigures, figure: FigurePrinter): void {
  const { hits, bare, notModified } = r;
  const text = (p: HitPhase) =>
    `${p.perS.toFixed(0)}/s, p50 ${p.p50} ms, p99 ${p.p99} ms, ${p.cpuMsPerAnswer.toFixed(3)} ms CPU/answer (${p.other} other, ${p.errors} errors)`;
  figure(`render-link hits at 50 connections (${r.bytes} bytes)`, text(hits), 'reference', hits.other === 0 ? null : false);
  figure('bare node:http server, same bytes and headers, same settings', text(bare), 'reference', null);
  const rateRatio = hits.perS / bare.perS;
  figure('render-link hits/s / the bare server’s', `${rateRatio.toFixed(2)}×`, '≥ 0.95×', rateRatio >= 0.95);
  const p99Ratio = hits.p99 / bare.p99;
  figure('render-link hit p99 / the bare server’s', `${p99Ratio.toFixed(2)}× (${hits.p99} vs ${bare.p99} ms)`, '≤ 1.2×', p99Ratio <= 1.2);
  figure('render-link hit, service CPU per answer', `${hits.cpuMsPerAnswer.toFixed(3)} ms`, '≤ 0.3 ms', hits.cpuMsPerAnswer <= 0.3);
  const nmRatio = notModified.perS / hits.perS;
  figure(
    '304 answers (If-None-Match) per s, against hits',
    `${notModified.perS.toFixed(0)}/s = ${nmRatio.toFixed(2)}× hits (p99 ${notModified.p99} ms, ${notModified.cpuMsPerAnswer.toFixed(3)} ms CPU/answer, ${notModified.other} other)`,
    '≥ 1.00×',
    nmRatio >= 1 && notModified.other === 0,
  );
}
