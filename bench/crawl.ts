/**
 * `npm run bench:crawl`: crawls (CONTRACT.md, "Crawls"; docs/crawls.md) against the real service: an
 * API (`WORKER_MODE=off`) and one worker (`dist/worker.js`), PostgreSQL, Redis, Chromium, and a loopback
 * site of BENCH_CRAWL_PAGES pages (a `/sitemap.xml` listing every page, each page linking to five others).
 *
 * In one run, on one machine:
 *  1. a batch of the same BENCH_CRAWL_PAGES URLs (`POST /v1/screenshot/batch`, 100 a request): pages per
 *     second from the first job created to the last ended, and the worker's CPU time per page;
 *  2. a crawl of the site (`maxPages` = BENCH_CRAWL_PAGES): pages per second from the crawl's creation to
 *     its last job's end (target ≥ 0.9 × the batch's), and to the crawl's end (its bundle stored); the
 *     worker's CPU time per page, whose excess over the batch's is the discovery (and bundling) overhead;
 *  3. the peak RSS of the worker and of the API, sampled every 50 ms, while the crawl captures and while
 *     it bundles (from its last job's end to its end): the bundle is streamed, so it should stay flat.
 *
 * Knobs (environment): BENCH_CRAWL_PAGES (500), BENCH_CAPTURE_CONCURRENCY (the service's default).
 */
import { ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  benchDatabaseUrl,
  createBenchDatabase,
  dropBenchState,
  envNumber,
  freePort,
  loadAverage,
  REDIS_URL,
  sleep,
  startProcess,
  stopProcess,
} from './bench-support';

const PAGES = envNumber('BENCH_CRAWL_PAGES', 500);
const ROOT = resolve(__dirname, '..');
const CLOCK_TICKS_PER_S = 100;

/** The loopback site: `/sitemap.xml`, `/robots.txt`, `/` and `/p/0` … `/p/{PAGES-1}`, each page linking to five others. */
async function startSite(): Promise<{ server: Server; url: string }> {
  let origin = '';
  const page = (i: number) => {
    const links = [1, 2, 3, 5, 8].map((d) => `<a href="/p/${(i + d) % PAGES}">page ${(i + d) % PAGES}</a>`).join(' ');
    return `<!doctype html><html><head><title>Page ${i}</title></head><body><h1>Page ${i}</h1><p>${'Lorem ipsum dolor sit amet. '.repeat(20)}</p>${links}</body></html>`;
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    if (path === '/sitemap.xml') {
      const urls = Array.from({ length: PAGES - 1 }, (_, i) => `<url><loc>${origin}/p/${i}</loc></url>`).join('');
      return void res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`);
    }
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(page(PAGES - 1));
    const match = /^\/p\/(\d+)$/.exec(path);
    if (match && Number(match[1]) < PAGES) return void res.writeHead(200, { 'content-type': 'text/html' }).end(page(Number(match[1])));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url: origin };
}

/** CPU time (user + system) of process `pid` so far, ms (Linux `/proc/<pid>/stat`). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

/** Resident set size of process `pid` now, bytes. */
function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return line ? Number(line[1]) * 1024 : 0;
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `glimpse_bench_${runId}`;
  const prefix = `glimpse_bench_${runId}`;
  const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-bench-crawl-'));
  const site = await startSite();
  const apiPort = await freePort();
  const env = (port: number): NodeJS.ProcessEnv => ({
    ...process.env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${apiPort}`,
    DATABASE_URL: benchDatabaseUrl(database),
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    STORAGE_DIR: storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    ...(process.env.BENCH_CAPTURE_CONCURRENCY ? { CAPTURE_CONCURRENCY: process.env.BENCH_CAPTURE_CONCURRENCY } : {}),
  });
  console.log(`bench:crawl: ${PAGES} pages, ${cpus().length} CPUs, load ${loadAverage()}`);
  const db = await createBenchDatabase(database);
  const procs: ChildProcess[] = [];
  try {
    const cli = (...args: string[]) =>
      JSON.parse(
        execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args, '--json'], { env: env(0), encoding: 'utf8' })
          .trim()
          .split('\n')
          .pop() as string,
      );
    const email = `bench-crawl-${runId}@localhost`;
    cli('account:create', '--email', email, '--plan', 'pro');
    const key = cli('key:create', '--account', email, '--name', 'bench').key as string;
    const base = `http://127.0.0.1:${apiPort}`;
    const api = await startProcess(ROOT, 'main', { ...env(apiPort), WORKER_MODE: 'off' }, `${base}/ready`);
    procs.push(api);
    const healthPort = await freePort();
    const worker = await startProcess(
      ROOT,
      'worker',
      { ...env(0), WORKER_HEALTH_PORT: String(healthPort) },
      `http://127.0.0.1:${healthPort}/ready`,
    );
    procs.push(worker);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status !== 202) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as { id: string };
    };
    const openJobs = async () =>
      (await db.query(`SELECT count(*)::int AS n FROM screenshot_jobs WHERE status IN ('pending', 'processing')`)).rows[0].n as number;

    // Warm-up: the browser's first contexts.
    await post('/v1/screenshot/batch', { items: Array.from({ length: 4 }, () => ({ url: `${site.url}/` })) });
    while ((await openJobs()) > 0) await sleep(200);

    // 1. The batch.
    const urls = [`${site.url}/`, ...Array.from({ length: PAGES - 1 }, (_, i) => `${site.url}/p/${i}`)];
    const batchCpu0 = cpuMs(worker.pid!);
    const batchFrom = new Date();
    for (let i = 0; i < urls.length; i += 100)
      await post('/v1/screenshot/batch', { items: urls.slice(i, i + 100).map((url) => ({ url })) });
    while ((await openJobs()) > 0) await sleep(200);
    const batchCpu = cpuMs(worker.pid!) - batchCpu0;
    const [batch] = (
      await db.query(
        `SELECT count(*)::int AS jobs, extract(epoch FROM max(completed_at) - min(created_at)) AS s FROM screenshot_jobs WHERE created_at >= $1 AND crawl_id IS NULL`,
        [batchFrom],
      )
    ).rows;
    const batchRate = batch.jobs / Number(batch.s);
    console.log(
      `  batch: ${batch.jobs} jobs in ${Number(batch.s).toFixed(1)} s = ${batchRate.toFixed(2)} pages/s; worker CPU ${(batchCpu / batch.jobs).toFixed(1)} ms/page`,
    );

    // 2. and 3. The crawl, its RSS sampled.
    const peaks = { captureWorker: 0, captureApi: 0, bundleWorker: 0, bundleApi: 0 };
    let phase: 'capture' | 'bundle' = 'capture';
    const sampler = setInterval(() => {
      const w = rssBytes(worker.pid!);
      const a = rssBytes(api.pid!);
      if (phase === 'capture') {
        peaks.captureWorker = Math.max(peaks.captureWorker, w);
        peaks.captureApi = Math.max(peaks.captureApi, a);
      } else {
        peaks.bundleWorker = Math.max(peaks.bundleWorker, w);
        peaks.bundleApi = Math.max(peaks.bundleApi, a);
      }
    }, 50);
    const crawlCpu0 = cpuMs(worker.pid!);
    const { id } = await post('/v1/crawls', { url: `${site.url}/`, maxPages: PAGES, maxDepth: 5 });
    let crawl: Record<string, any>;
    for (;;) {
      crawl = (await (await fetch(`${base}/v1/crawls/${id}`, { headers })).json()) as Record<string, any>;
      // Every page queued and every job ended: the crawl is storing its bundle.
      if (phase === 'capture' && crawl.pagesQueued >= PAGES && (await openJobs()) === 0) phase = 'bundle';
      if (!['pending', 'running'].includes(crawl.status)) break;
      await sleep(50);
    }
    clearInterval(sampler);
    const crawlCpu = cpuMs(worker.pid!) - crawlCpu0;
    const [jobs] = (
      await db.query(
        `SELECT count(*)::int AS jobs, extract(epoch FROM max(j.completed_at) - c.created_at) AS s, extract(epoch FROM c.completed_at - max(j.completed_at)) AS bundle_s,
                extract(epoch FROM c.completed_at - c.created_at) AS total_s
           FROM screenshot_jobs j JOIN crawls c ON c.id = j.crawl_id WHERE c.id = $1 GROUP BY c.created_at, c.completed_at`,
        [id],
      )
    ).rows;
    const crawlRate = jobs.jobs / Number(jobs.s);
    const bundle = await fetch(crawl.bundleUrl, { method: 'HEAD' });
    console.log(
      `  crawl: ${crawl.status}, ${crawl.pagesDone} done of ${crawl.pagesFound} found (stopped: ${crawl.stoppedReason}); ${jobs.jobs} jobs in ${Number(jobs.s).toFixed(1)} s = ${crawlRate.toFixed(2)} pages/s ` +
        `(${(crawlRate / batchRate).toFixed(2)} × the batch; target ≥ 0.9); with the bundle ${Number(jobs.total_s).toFixed(1)} s (bundling ${Number(jobs.bundle_s).toFixed(1)} s, ${mib(Number(bundle.headers.get('content-length')))})`,
    );
    console.log(
      `  worker CPU: crawl ${(crawlCpu / jobs.jobs).toFixed(1)} ms/page vs batch ${(batchCpu / batch.jobs).toFixed(1)} ms/page: discovery and bundling ${((crawlCpu - batchCpu) / jobs.jobs).toFixed(1)} ms/page`,
    );
    console.log(
      `  peak RSS while capturing: worker ${mib(peaks.captureWorker)}, API ${mib(peaks.captureApi)}; while bundling: worker ${mib(peaks.bundleWorker)}, API ${mib(peaks.bundleApi)}`,
    );
  } finally {
    for (const proc of procs.reverse()) await stopProcess(proc);
    await db.end();
    await dropBenchState(database, prefix);
    site.server.close();
    rmSync(storageDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
