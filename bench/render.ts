/**
 * `npm run bench:render`: render link figures (docs/render-links.md#performance), measured against the
 * real service (`dist/main.js` in a child process, PostgreSQL, Redis, Chromium) with pages served on
 * loopback by bench/page-sites.js.
 *
 * Phases (BENCH_PHASES, comma-separated; default all, in this order):
 *  - hit: one link rendered once, then requested by autocannon at 50 connections for
 *    BENCH_AUTOCANNON_S s, beside a bare `node:http` server sending the same bytes in the same run,
 *    then with `If-None-Match` (304s), then `GET /health` ({@link measureRenderHits}): hits/s, p50/p99,
 *    their ratios to the bare server's and the service's CPU per answer;
 *  - flight: 100 requests of one link not yet rendered, all at once: the jobs and quota units they
 *    made, counted in PostgreSQL (exactly 1 and 1);
 *  - miss: BENCH_MISS_LINKS links of the simple page, each new, one at a time: link request → first
 *    byte p50, beside `POST /v1/screenshot` with `Prefer: wait=30` (an idle capture) → first byte p50.
 *
 * Knobs (environment): BENCH_AUTOCANNON_S (10), BENCH_MISS_LINKS (15), BENCH_SERVICE_NODE_ARGS (extra
 * `node` flags for the service, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the hit path).
 */
import autocannon from 'autocannon';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { signedRenderLink } from '../src/render/render-signature';
import { fixedLoopMs, measureRenderHits, printRenderHitFigures } from './render-hits';
import {
  benchDatabaseUrl,
  createBenchDatabase,
  dropBenchState,
  envNumber,
  freePort,
  loadAverage,
  percentile,
  REDIS_URL,
  sleep,
} from './bench-support';

const PHASES = new Set((process.env.BENCH_PHASES ?? 'hit,flight,miss').split(',').map((p) => p.trim()));
const AUTOCANNON_S = envNumber('BENCH_AUTOCANNON_S', 10);
const MISS_LINKS = envNumber('BENCH_MISS_LINKS', 15);
const ROOT = resolve(__dirname, '..');

const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const database = `glimpse_bench_${runId}`;
const dbUrl = benchDatabaseUrl(database);
const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-bench-render-'));
const summary: string[] = [];

function figure(name: string, value: string, target: string, ok: boolean | null): void {
  const line = `${ok === null ? '·     ' : ok ? 'MET   ' : 'MISSED'} ${name}: ${value} (target ${target})`;
  summary.push(line);
  console.log(`  ${line}`);
}

function serviceEnv(port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port || 3000}`,
    DATABASE_URL: dbUrl,
    REDIS_URL,
    QUEUE_PREFIX: `glimpse_bench_${runId}`,
    STORAGE_DIR: storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
  };
}

function cli(...args: string[]): any {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args, '--json'], { env: serviceEnv(0), encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() as string);
}

async function startService(): Promise<{ proc: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const baseUrl = `http://127.0.0.1:${port}`;
  const proc = spawn(process.execPath, [...nodeArgs, join(ROOT, 'dist/main.js')], {
    env: serviceEnv(port),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`service exited with ${proc.exitCode}`);
    if ((await fetch(`${baseUrl}/health`).catch(() => null))?.ok) return { proc, baseUrl };
    if (Date.now() > deadline) throw new Error('service was not up in 60 s');
    await sleep(200);
  }
}

async function startPageSites(): Promise<{ proc: ChildProcess; simple: string[] }> {
  const proc = spawn(process.execPath, [join(ROOT, 'bench/page-sites.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SITES: '1' },
  });
  const line = await new Promise<string>((r, j) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).once('line', r);
    proc.once('exit', (code) => j(new Error(`page-sites exited with ${code}`)));
  });
  return { proc, ...(JSON.parse(line) as { simple: string[] }) };
}

/** A signed PNG render link (docs/render-links.md, "Signing a link"). */
function signedLink(baseUrl: string, key: { id: string; secret: string }, params: Record<string, string>): string {
  return signedRenderLink(baseUrl, key.id, key.secret, 'png', params);
}

/** Milliseconds from sending `url` to its first body byte (the whole answer read after), and the status. */
async function firstByteMs(url: string, init?: RequestInit): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const reader = res.body!.getReader();
  await reader.read();
  const ms = performance.now() - t0;
  while (!(await reader.read()).done);
  return { ms, status: res.status };
}

async function main(): Promise<void> {
  console.log(`Glimpse render link benchmark (run ${runId}): ${cpus().length} CPUs, load average ${loadAverage()}`);
  console.log(`A fixed JavaScript loop took ${fixedLoopMs().toFixed(0)} ms (see docs/performance.md for a quiet machine's time)`);
  const db = await createBenchDatabase(database);
  const sites = await startPageSites();
  const email = `bench-render-${runId}@localhost`;
  cli('account:create', '--email', email, '--plan', 'pro');
  const apiKey: string = cli('key:create', '--account', email, '--name', 'bench').key;
  const service = await startService();
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  try {
    const res = await fetch(`${service.baseUrl}/v1/render-keys`, { method: 'POST', headers: auth, body: '{}' });
    if (res.status !== 201) throw new Error(`POST /v1/render-keys answered ${res.status}`);
    const renderKey = (await res.json()) as { id: string; secret: string };
    const page = sites.simple[0];

    if (PHASES.has('hit')) {
      console.log(`\n[hit] one cached link, 50 connections, ${AUTOCANNON_S} s per phase (autocannon); load ${loadAverage()}`);
      const link = signedLink(service.baseUrl, renderKey, { url: `${page}?hit`, width: '800', height: '600' });
      const first = await firstByteMs(link);
      if (first.status !== 200) throw new Error(`the hit link answered ${first.status} when first rendered`);
      printRenderHitFigures(await measureRenderHits(link, service.proc.pid as number, AUTOCANNON_S, storageDir), figure);
      // The service's own HTTP floor: the same process and pipeline answering a route that touches
      // neither PostgreSQL nor Redis.
      const floor = await autocannon({ url: `${service.baseUrl}/health`, connections: 50, duration: AUTOCANNON_S });
      figure('GET /health per s at 50 connections', `${(floor['2xx'] / AUTOCANNON_S).toFixed(0)} (p99 ${floor.latency.p99} ms)`, '—', null);
    }

    if (PHASES.has('flight')) {
      console.log(`\n[flight] 100 identical links on a cold cache, all at once; load ${loadAverage()}`);
      const link = signedLink(service.baseUrl, renderKey, { url: `${page}?flight-${runId}` });
      const statuses = await Promise.all(
        Array.from({ length: 100 }, () => fetch(link).then(async (r) => (await r.arrayBuffer(), r.status))),
      );
      const { rows } = await db.query(
        `SELECT (SELECT count(*)::int FROM screenshot_jobs WHERE target_url = $1) AS jobs,
                (SELECT coalesce(sum(used), 0)::int FROM quota_usage) AS used`,
        [`${page}?flight-${runId}`],
      );
      const ok = statuses.filter((s) => s === 200).length;
      figure('jobs made by 100 identical links', `${rows[0].jobs} (${ok} × 200)`, '1', rows[0].jobs === 1);
      const usedBefore = PHASES.has('hit') ? 1 : 0;
      figure('quota units counted for them', `${rows[0].used - usedBefore}`, '1', rows[0].used - usedBefore === 1);
    }

    if (PHASES.has('miss')) {
      console.log(`\n[miss] ${MISS_LINKS} new links of the simple page, one at a time, beside idle captures; load ${loadAverage()}`);
      const links: number[] = [];
      const captures: number[] = [];
      for (let i = 0; i < MISS_LINKS; i++) {
        await sleep(300);
        const miss = await firstByteMs(signedLink(service.baseUrl, renderKey, { url: `${page}?miss-${i}` }));
        if (miss.status !== 200) throw new Error(`a miss answered ${miss.status}`);
        links.push(miss.ms);
        await sleep(300);
        const capture = await firstByteMs(`${service.baseUrl}/v1/screenshot`, {
          method: 'POST',
          headers: { ...auth, prefer: 'wait=30' },
          body: JSON.stringify({ url: `${page}?capture-${i}` }),
        });
        if (capture.status !== 200) throw new Error(`POST /v1/screenshot with Prefer: wait answered ${capture.status}`);
        captures.push(capture.ms);
      }
      figure(
        'cache miss, link request → first byte p50 (simple page)',
        `${percentile(links, 50).toFixed(0)} ms (p90 ${percentile(links, 90).toFixed(0)} ms)`,
        'close to the idle capture',
        null,
      );
      figure(
        'idle capture, POST /v1/screenshot with Prefer: wait → first byte p50',
        `${percentile(captures, 50).toFixed(0)} ms (p90 ${percentile(captures, 90).toFixed(0)} ms)`,
        'reference',
        null,
      );
    }
  } finally {
    service.proc.kill('SIGTERM');
    await new Promise((r) => service.proc.once('exit', r));
    sites.proc.kill();
    await db.end();
    await dropBenchState(database, `glimpse_bench_${runId}`);
    rmSync(storageDir, { recursive: true, force: true });
  }
  console.log(`\nSummary (load average now ${loadAverage()}):`);
  for (const line of summary) console.log(`  ${line}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
