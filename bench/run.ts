/**
 * `npm run bench`: the capture service's figures against the targets of issue 7, measured on this
 * machine against the real service (`dist/main.js` in a child process, PostgreSQL, Redis, Chromium),
 * jobs submitted through the HTTP API, pages served on 127.0.0.1. Bounded in count and time.
 *
 * Phases (each on a fresh service process and its own queue prefix, one throw-away database):
 *  1. accept rate: `POST /v1/screenshot` with processors off, autocannon, 50 connections;
 *  2. naive baseline: a new context and page per capture (`CAPTURE_WARM_CONTEXTS=0`);
 *  3. the service as configured: idle latency 202 → done, sustained throughput, then memory after
 *     many captures, then SIGTERM and a check that no Chromium process is left.
 *
 * Knobs (environment): BENCH_JOBS (300), BENCH_BASELINE_JOBS (100), BENCH_LATENCY_JOBS (20),
 * BENCH_MEMORY_CAPTURES (2000), BENCH_AUTOCANNON_S (10), BENCH_CONCURRENCY (CAPTURE_CONCURRENCY for
 * the service, default 3), BENCH_PHASE_TIMEOUT_S (600).
 */
import autocannon from 'autocannon';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const JOBS = env('BENCH_JOBS', 300);
const BASELINE_JOBS = env('BENCH_BASELINE_JOBS', 100);
const LATENCY_JOBS = env('BENCH_LATENCY_JOBS', 20);
const MEMORY_CAPTURES = env('BENCH_MEMORY_CAPTURES', 2000);
const AUTOCANNON_S = env('BENCH_AUTOCANNON_S', 10);
const CONCURRENCY = env('BENCH_CONCURRENCY', 3);
const PHASE_TIMEOUT_MS = env('BENCH_PHASE_TIMEOUT_S', 600) * 1000;
const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = resolve(__dirname, '..');

const PAGE = '<!doctype html><html><head><title>bench</title></head><body style="font-family:sans-serif"><h1>Glimpse benchmark</h1><p>A simple local page.</p></body></html>';

interface Service {
  proc: ChildProcess;
  baseUrl: string;
}

const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const database = `glimpse_bench_${runId}`;
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${database}`;
  return u.toString();
})();
const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-bench-'));
const figures: { name: string; value: string; target: string; ok: boolean | null }[] = [];
let db: Client;

function figure(name: string, value: string, target: string, ok: boolean | null): void {
  figures.push({ name, value, target, ok });
  console.log(`  ${ok === null ? '·' : ok ? '✓' : '✗'} ${name}: ${value} (target ${target})`);
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function serviceEnv(port: number, prefix: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port || 3000}`,
    DATABASE_URL: dbUrl,
    REDIS_URL,
    QUEUE_PREFIX: `glimpse_bench_${runId}_${prefix}`,
    STORAGE_DIR: storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    LEGACY_FREE_CAP: '1000000000',
    CAPTURE_CONCURRENCY: String(CONCURRENCY),
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

async function startService(prefix: string, extra: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const proc = spawn(process.execPath, [join(ROOT, 'dist/main.js')], { env: serviceEnv(port, prefix, extra), stdio: ['ignore', 'inherit', 'inherit'] });
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`service exited with ${proc.exitCode}`);
    try {
      await fetch(`${baseUrl}/v1/screenshot/x`);
      return { proc, baseUrl };
    } catch {
      if (Date.now() > deadline) throw new Error('service did not start in 60 s');
      await sleep(200);
    }
  }
}

async function stopService(s: Service): Promise<number> {
  if (s.proc.exitCode !== null) return s.proc.exitCode;
  const exited = new Promise<number>((r) => s.proc.once('exit', (code) => r(code ?? 0)));
  s.proc.kill('SIGTERM');
  const timer = setTimeout(() => s.proc.kill('SIGKILL'), 60_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function cli(...args: string[]): any {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args, '--json'], {
    env: serviceEnv(0, 'cli', {}),
    encoding: 'utf8',
  });
  return JSON.parse(out.trim().split('\n').pop() as string);
}

async function submit(s: Service, key: string, url: string): Promise<string> {
  const res = await fetch(`${s.baseUrl}/v1/screenshot`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  const body = (await res.json()) as { id: string };
  if (res.status !== 202) throw new Error(`POST /v1/screenshot answered ${res.status}: ${JSON.stringify(body)}`);
  return body.id;
}

/** Submits `count` jobs with `parallel` submitters; waits until all ended; returns their ids. */
async function runJobs(s: Service, key: string, url: string, count: number, parallel = 16): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        next++;
        ids.push(await submit(s, key, url));
      }
    }),
  );
  const deadline = Date.now() + PHASE_TIMEOUT_MS;
  for (;;) {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM screenshot_jobs WHERE id = ANY($1) AND status IN ('done','failed')`, [ids]);
    if (rows[0].n === ids.length) return ids;
    if (Date.now() > deadline) throw new Error(`${ids.length - rows[0].n} jobs still running after ${PHASE_TIMEOUT_MS / 1000} s`);
    await sleep(100);
  }
}

async function throughput(ids: string[]): Promise<{ perSecond: number; failed: number }> {
  const { rows } = await db.query(
    `SELECT extract(epoch FROM max(completed_at) - min(created_at)) AS seconds, count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM screenshot_jobs WHERE id = ANY($1)`,
    [ids],
  );
  return { perSecond: ids.length / Number(rows[0].seconds), failed: rows[0].failed };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** pid → parent pid for every process. */
function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      table.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  return table;
}

function descendants(root: number): number[] {
  const table = processTable();
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of table) if (ppid === out[i]) out.push(pid);
  return out;
}

/** Sum of PSS (proportional set size: shared pages split between sharers) and of RSS, bytes. */
function memoryOf(pids: number[]): { pss: number; rss: number } {
  let pss = 0;
  let rss = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) * 1024;
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) * 1024;
    } catch {
      /* gone or not readable */
    }
  }
  return { pss, rss };
}

function isChromium(pid: number): boolean {
  try {
    return /chrom/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

const GiB = 1024 ** 3;

async function main(): Promise<void> {
  const started = Date.now();
  console.log(`Glimpse benchmark (run ${runId}): ${require('node:os').cpus().length} CPUs, load average ${require('node:os').loadavg().map((l: number) => l.toFixed(2)).join(' ')}`);
  console.log('Note: a shared machine gives noisy figures; compare the baseline ratio more than absolute numbers.');
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  const ds = new DataSource(dataSourceOptions({ databaseUrl: dbUrl }));
  await ds.initialize();
  await ds.runMigrations();
  await ds.destroy();
  db = new Client({ connectionString: dbUrl });
  await db.connect();

  const pageServer: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r));
  const pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;

  const email = `bench-${runId}@localhost`;
  cli('account:create', '--email', email, '--plan', 'legacy_free');
  const key: string = cli('key:create', '--account', email, '--name', 'bench').key;

  let service: Service | null = null;
  try {
    // 1. Accept rate with processors off.
    console.log(`\n[1/3] POST /v1/screenshot, processors off, 50 connections, ${AUTOCANNON_S} s (autocannon)`);
    service = await startService('accept', { WORKER_MODE: 'off' });
    await autocannon({ url: `${service.baseUrl}/v1/screenshot`, connections: 10, duration: 2, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: pageUrl }) });
    const ac = await autocannon({
      url: `${service.baseUrl}/v1/screenshot`,
      connections: 50,
      duration: AUTOCANNON_S,
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: pageUrl }),
    });
    const accepted = ac['2xx'] / AUTOCANNON_S;
    figure('accepted requests/s', `${accepted.toFixed(0)} (${ac['2xx']} × 202, ${ac.non2xx} non-2xx, ${ac.errors} errors)`, '≥ 1000/s', accepted >= 1000 && ac.non2xx === 0);
    figure('p99 latency at 50 connections', `${ac.latency.p99} ms (p50 ${ac.latency.p50} ms)`, '≤ 100 ms', ac.latency.p99 <= 100);
    await stopService(service);
    service = null;

    // 2. Naive baseline: a new context and page per capture.
    console.log(`\n[2/3] naive baseline: new context + page per capture, ${BASELINE_JOBS} jobs`);
    service = await startService('baseline', { CAPTURE_WARM_CONTEXTS: '0' });
    await runJobs(service, key, pageUrl, 3);
    const baseline = await throughput(await runJobs(service, key, pageUrl, BASELINE_JOBS));
    figure('baseline captures/s', `${baseline.perSecond.toFixed(2)} (${baseline.failed} failed)`, 'reference', null);
    await stopService(service);
    service = null;

    // 3. The service as configured.
    console.log(`\n[3/3] service as configured (CAPTURE_CONCURRENCY=${CONCURRENCY}, warm contexts default)`);
    service = await startService('main', {});
    await runJobs(service, key, pageUrl, 3);
    const latencies: number[] = [];
    const serverLatencies: number[] = [];
    for (let i = 0; i < LATENCY_JOBS; i++) {
      await sleep(150); // idle: let the warm pool refill
      const t0 = performance.now();
      const id = await submit(service, key, pageUrl);
      const t1 = performance.now();
      for (;;) {
        const res = await fetch(`${service.baseUrl}/v1/screenshot/${id}`, { headers: { authorization: `Bearer ${key}` } });
        const job = (await res.json()) as { status: string; createdAt: string; completedAt: string };
        if (job.status === 'done' || job.status === 'failed') {
          latencies.push(performance.now() - t1);
          serverLatencies.push(new Date(job.completedAt).getTime() - new Date(job.createdAt).getTime());
          break;
        }
        if (performance.now() - t0 > 30_000) throw new Error(`job ${id} not done in 30 s`);
        await sleep(5);
      }
    }
    const p50 = percentile(latencies, 50);
    figure('single job 202 → done, p50 (client, 5 ms polling)', `${p50.toFixed(0)} ms (p90 ${percentile(latencies, 90).toFixed(0)} ms; server-side createdAt→completedAt p50 ${percentile(serverLatencies, 50).toFixed(0)} ms)`, '≤ 250 ms', p50 <= 250);

    const warm = await throughput(await runJobs(service, key, pageUrl, JOBS));
    figure(`sustained captures/s over ${JOBS} jobs`, `${warm.perSecond.toFixed(2)} (${warm.failed} failed)`, '≥ 12/s', warm.perSecond >= 12 && warm.failed === 0);
    const ratio = warm.perSecond / baseline.perSecond;
    figure('ratio to the naive baseline', `${ratio.toFixed(2)}×`, '≥ 3×', ratio >= 3);

    const done = JOBS + LATENCY_JOBS + 3;
    const more = Math.max(0, MEMORY_CAPTURES - done);
    console.log(`  … ${more} more captures for the memory figure`);
    if (more) await runJobs(service, key, pageUrl, more);
    const pids = descendants(service.proc.pid as number);
    const mem = memoryOf(pids);
    const chromiumPids = pids.filter(isChromium);
    figure(
      `worker memory after ${Math.max(done, MEMORY_CAPTURES)} captures (Node + ${chromiumPids.length} Chromium processes)`,
      `PSS ${(mem.pss / GiB).toFixed(2)} GiB (RSS sum ${(mem.rss / GiB).toFixed(2)} GiB, counts shared pages once per process)`,
      '≤ 1.5 GiB',
      mem.pss <= 1.5 * GiB,
    );
    const code = await stopService(service);
    service = null;
    await sleep(500);
    const left = chromiumPids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return isChromium(pid);
      } catch {
        return false;
      }
    });
    figure('Chromium processes left after shutdown (SIGTERM)', `${left.length} (service exit code ${code})`, '0', left.length === 0);
  } finally {
    if (service) await stopService(service);
    await new Promise((r) => pageServer.close(r));
    await db.end();
    const cleanup = new Client({ connectionString: ADMIN_URL });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await cleanup.end();
    const redis = new Redis(REDIS_URL);
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `glimpse_bench_${runId}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = nextCursor;
    } while (cursor !== '0');
    await redis.quit();
    rmSync(storageDir, { recursive: true, force: true });
  }
  console.log(`\nSummary (${((Date.now() - started) / 1000).toFixed(0)} s):`);
  for (const f of figures) console.log(`  ${f.ok === null ? '·' : f.ok ? 'MET   ' : 'MISSED'} ${f.name}: ${f.value} (target ${f.target})`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
