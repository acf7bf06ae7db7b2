/**
 * `npm run bench:fairness`: fair share across accounts (CONTRACT.md, "Tenancy: fair share and
 * isolation"; docs/durability.md, "Fair share"), measured against the real service (`dist/main.js`
 * in a child process, PostgreSQL, Redis, Chromium) with a page served on loopback that answers after
 * BENCH_PAGE_MS ms.
 *
 * Scenario, per service tree:
 *  1. idle: account B sends BENCH_IDLE captures with `Prefer: wait=60`, one after another: B's idle
 *     p50 (request → job ended) and one capture's time (p50 of the jobs' claim → end, from the rows);
 *  2. account A queues BENCH_FAIRNESS_N captures (batches of 100);
 *  3. B sends BENCH_FAIRNESS_B captures with `Prefer: wait=60` one after another (a request not ended
 *     in 60 s is polled until it ends): p50/p99 against idle p50 + one capture (target: p50 ≤ 1.5 ×);
 *  4. A sends BENCH_FAIRNESS_A interactive captures the same way: p50/p99 likewise;
 *  5. once every job ended: the run's throughput, jobs ended ÷ (last end − first claim after step 2),
 *     read from the rows.
 *
 * BENCH_COMPARE_ROOT: a second service tree (e.g. a `git worktree` of main, built with `npm run
 * build` there) run through the same scenario afterwards, so both throughputs come from one machine
 * (target: within 3 %); BENCH_COMPARE_FIRST=1 runs it first. The database of each tree is migrated by
 * that tree's own migrations.
 *
 * Knobs (environment): BENCH_FAIRNESS_N (1000), BENCH_FAIRNESS_B (20), BENCH_FAIRNESS_A (5),
 * BENCH_IDLE (5), BENCH_PAGE_MS (500), BENCH_CAPTURE_CONCURRENCY (the service's default).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import {
  ADMIN_URL,
  benchDatabaseUrl,
  dropBenchState,
  envNumber,
  freePort,
  loadAverage,
  percentile,
  REDIS_URL,
  sleep,
} from './bench-support';

const N = envNumber('BENCH_FAIRNESS_N', 1000);
const B_COUNT = envNumber('BENCH_FAIRNESS_B', 20);
const A_COUNT = envNumber('BENCH_FAIRNESS_A', 5);
const IDLE = envNumber('BENCH_IDLE', 5);
const PAGE_MS = envNumber('BENCH_PAGE_MS', 500);
const WAIT_S = 60;
const OWN = resolve(__dirname, '..');
const COMPARE = process.env.BENCH_COMPARE_ROOT ? [resolve(process.env.BENCH_COMPARE_ROOT)] : [];
/** The trees in the order run (BENCH_COMPARE_FIRST=1: the compared tree first, to see how much the order weighs on a shared machine). */
const TREES = process.env.BENCH_COMPARE_FIRST === '1' ? [...COMPARE, OWN] : [OWN, ...COMPARE];

/** What one tree's run measured (ms, jobs/s). */
interface Figures {
  tree: string;
  idleP50: number;
  captureP50: number;
  b: number[];
  a: number[];
  throughput: number;
  jobs: number;
}

/** The loopback page: answers after PAGE_MS ms. */
async function startPage(): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><h1>slow page</h1>'), PAGE_MS);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow` };
}

/** One service tree's run of the scenario (see the file comment). */
async function runTree(tree: string, pageUrl: string): Promise<Figures> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `glimpse_bench_${runId}`;
  const prefix = `glimpse_bench_${runId}`;
  const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-bench-fairness-'));
  const env = (port: number): NodeJS.ProcessEnv => ({
    ...process.env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port || 3000}`,
    DATABASE_URL: benchDatabaseUrl(database),
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    STORAGE_DIR: storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    ...(process.env.BENCH_CAPTURE_CONCURRENCY ? { CAPTURE_CONCURRENCY: process.env.BENCH_CAPTURE_CONCURRENCY } : {}),
  });
  const node = (script: string, ...args: string[]) =>
    execFileSync(process.execPath, [join(tree, 'dist', script), ...args], { env: env(0), encoding: 'utf8' });
  const cli = (...args: string[]) =>
    JSON.parse(
      node('cli.js', ...args, '--json')
        .trim()
        .split('\n')
        .pop() as string,
    );

  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  node('database/run-migrations.js');
  const db = new Client({ connectionString: benchDatabaseUrl(database) });
  await db.connect();
  let proc: ChildProcess | undefined;
  try {
    const keys: Record<string, string> = {};
    for (const name of ['a', 'b']) {
      const email = `bench-fair-${name}-${runId}@localhost`;
      cli('account:create', '--email', email, '--plan', 'pro');
      keys[name] = cli('key:create', '--account', email, '--name', 'bench').key;
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    proc = spawn(process.execPath, [join(tree, 'dist/main.js')], { env: env(port), stdio: ['ignore', 'inherit', 'inherit'] });
    const deadline = Date.now() + 60_000;
    while (!(await fetch(`${base}/ready`).catch(() => null))?.ok) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error('the service did not become ready');
      await sleep(200);
    }
    const headers = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

    /** One capture with `Prefer: wait`: ms from the request to the job's end (polled past the wait). */
    const waited = async (key: string): Promise<{ ms: number; id: string }> => {
      const t0 = performance.now();
      const res = await fetch(`${base}/v1/screenshot`, {
        method: 'POST',
        headers: { ...headers(key), prefer: `wait=${WAIT_S}` },
        body: JSON.stringify({ url: pageUrl }),
      });
      let job = (await res.json()) as { id: string; status: string };
      if (res.status !== 200 && res.status !== 202) throw new Error(`POST /v1/screenshot answered ${res.status}`);
      while (job.status !== 'done' && job.status !== 'failed') {
        await sleep(100);
        job = (await (await fetch(`${base}/v1/screenshot/${job.id}`, { headers: headers(key) })).json()) as typeof job;
      }
      return { ms: performance.now() - t0, id: job.id };
    };

    const idle: number[] = [];
    const idleIds: string[] = [];
    for (let i = 0; i < IDLE + 1; i++) {
      const { ms, id } = await waited(keys.b);
      // The first warms the browser up.
      if (i === 0) continue;
      idle.push(ms);
      idleIds.push(id);
    }
    const [{ p50 }] = (
      await db.query(
        `SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - started_at) * 1000) AS p50
           FROM screenshot_jobs WHERE id = ANY($1)`,
        [idleIds],
      )
    ).rows;
    const captureP50 = Number(p50);
    const idleP50 = percentile(idle, 50);
    console.log(`  idle: B p50 ${idleP50.toFixed(0)} ms, one capture (claim → end) p50 ${captureP50.toFixed(0)} ms`);

    const backlogFrom = new Date();
    for (let queued = 0; queued < N; queued += 100) {
      const items = Array.from({ length: Math.min(100, N - queued) }, () => ({ url: pageUrl }));
      const res = await fetch(`${base}/v1/screenshot/batch`, { method: 'POST', headers: headers(keys.a), body: JSON.stringify({ items }) });
      if (res.status !== 202) throw new Error(`POST /v1/screenshot/batch answered ${res.status}`);
    }
    console.log(`  A queued ${N} captures (load ${loadAverage()})`);
    const b: number[] = [];
    for (let i = 0; i < B_COUNT; i++) b.push((await waited(keys.b)).ms);
    console.log(`  B: ${b.length} captures, p50 ${percentile(b, 50).toFixed(0)} ms, p99 ${percentile(b, 99).toFixed(0)} ms`);
    const a: number[] = [];
    for (let i = 0; i < A_COUNT; i++) a.push((await waited(keys.a)).ms);
    console.log(`  A interactive: ${a.length} captures, p50 ${percentile(a, 50).toFixed(0)} ms, p99 ${percentile(a, 99).toFixed(0)} ms`);

    for (;;) {
      const [{ open }] = (await db.query(`SELECT count(*)::int AS open FROM screenshot_jobs WHERE status IN ('pending', 'processing')`))
        .rows;
      if (open === 0) break;
      if (proc.exitCode !== null) throw new Error('the service exited');
      await sleep(1000);
    }
    const [run] = (
      await db.query(
        `SELECT count(*)::int AS jobs, extract(epoch FROM max(completed_at) - min(started_at)) AS seconds
           FROM screenshot_jobs WHERE created_at >= $1`,
        [backlogFrom],
      )
    ).rows;
    const throughput = run.jobs / Number(run.seconds);
    console.log(`  throughput: ${run.jobs} jobs in ${Number(run.seconds).toFixed(1)} s = ${throughput.toFixed(2)} jobs/s`);
    return { tree, idleP50, captureP50, b, a, throughput, jobs: run.jobs };
  } finally {
    if (proc && proc.exitCode === null) {
      proc.kill('SIGTERM');
      await new Promise((r) => proc!.once('exit', r));
    }
    await db.end();
    await dropBenchState(database, prefix);
    rmSync(storageDir, { recursive: true, force: true });
  }
}

function report(f: Figures): string[] {
  const target = 1.5 * (f.idleP50 + f.captureP50);
  const line = (who: string, values: number[]) => {
    const p50 = percentile(values, 50);
    return `${p50 <= target ? 'MET   ' : 'MISSED'} ${who} p50 ${p50.toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms (target p50 ≤ 1.5 × (idle p50 ${f.idleP50.toFixed(0)} + one capture ${f.captureP50.toFixed(0)}) = ${target.toFixed(0)} ms)`;
  };
  return [line('B (another account) Prefer: wait', f.b), line("A's own interactive Prefer: wait", f.a)];
}

async function main(): Promise<void> {
  console.log(
    `Glimpse fairness benchmark: ${cpus().length} CPUs, load average ${loadAverage()}; N = ${N}, B = ${B_COUNT}, A interactive = ${A_COUNT}, page ${PAGE_MS} ms`,
  );
  const page = await startPage();
  const figures: Figures[] = [];
  try {
    for (const tree of TREES) {
      console.log(`\n[${tree}]`);
      figures.push(await runTree(tree, page.url));
    }
  } finally {
    page.server.close();
  }
  console.log('\nSummary');
  for (const f of figures) {
    console.log(`  ${f.tree}: throughput ${f.throughput.toFixed(2)} jobs/s over ${f.jobs} jobs`);
    for (const line of report(f)) console.log(`    ${line}`);
  }
  if (figures.length === 2) {
    const [own, other] = figures[0].tree === OWN ? figures : [figures[1], figures[0]];
    const change = (own.throughput / other.throughput - 1) * 100;
    console.log(
      `  ${Math.abs(change) <= 3 || change > 0 ? 'MET   ' : 'MISSED'} throughput ${change >= 0 ? '+' : ''}${change.toFixed(1)} % of ${own.tree} against ${other.tree} (target within 3 %)`,
    );
  }
  console.log(`  load average at the end: ${loadAverage()} (a shared machine: figures vary from run to run)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
