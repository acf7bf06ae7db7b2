/**
 * `npm run bench:capture-cpu`: the service's Node CPU per capture on the simple page
 * (docs/performance.md#where-the-services-node-cpu-goes), of this tree and, with BENCH_COMPARE_ROOT,
 * of a second built tree side by side: both services run at once (each its own database, queue prefix
 * and storage directory, `dist/main.js` at its defaults), and batches of BENCH_CPU_BATCH captures go to
 * one, then the other (the order swapped every round), so the machine's other load weighs on both
 * alike. Jobs are submitted through the API (16 at a time) and read back `done` from PostgreSQL, as
 * in `npm run bench`'s race. Before each batch the service's idle CPU is sampled for 3 s (its timers'
 * work, which the per-capture figure includes for the batch's duration). Prints each batch and, per
 * tree, the mean and the batches' range; CPU is the process's user + system time (/proc, 10 ms ticks).
 *
 * Knobs (environment): BENCH_COMPARE_ROOT (a second tree, built with `npm run build` or
 * `npm run build:js` there), BENCH_CPU_BATCH (60), BENCH_CPU_ROUNDS (6), BENCH_SERVICE_NODE_ARGS
 * (extra `node` flags for this tree's service), BENCH_COMPARE_NODE_ARGS (the same for the compared one).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from 'pg';
import {
  benchDatabaseUrl,
  createBenchDatabase,
  dropBenchState,
  envNumber,
  freePort,
  loadAverage,
  processCpuMs,
  REDIS_URL,
  sleep,
} from './bench-support';
import { fixedLoopMs } from './render-hits';

const BATCH = envNumber('BENCH_CPU_BATCH', 60);
const ROUNDS = envNumber('BENCH_CPU_ROUNDS', 6);
/** How long a service's idle CPU is sampled before each batch, ms (after 1 s for the browser pool to refill). */
const IDLE_SAMPLE_MS = 3_000;
const OWN = resolve(__dirname, '..');

/** One service tree under measurement and what was measured of it. */
interface Side {
  tree: string;
  nodeArgs: string[];
  database: string;
  prefix: string;
  storageDir: string;
  db: Client;
  proc: ChildProcess | null;
  baseUrl: string;
  key: string;
  /** Node CPU per capture of each batch, ms. */
  perCapture: number[];
  /** Idle CPU before each batch, ms/s. */
  idle: number[];
}

function serviceEnv(side: Side, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port || 3000}`,
    DATABASE_URL: benchDatabaseUrl(side.database),
    REDIS_URL,
    QUEUE_PREFIX: side.prefix,
    STORAGE_DIR: side.storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    LEGACY_FREE_CAP: '1000000000',
    LOG_LEVEL: 'warn',
  };
}

/** Submits `count` jobs of `urls` (round robin, 16 submitters), then waits until every one has ended; logs failed ones. */
async function runJobs(side: Side, urls: string[], count: number): Promise<void> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) {
        const url = urls[next++ % urls.length];
        const res = await fetch(`${side.baseUrl}/v1/screenshot`, {
          method: 'POST',
          headers: { authorization: `Bearer ${side.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url }),
        });
        const body = (await res.json()) as { id: string };
        if (res.status !== 202) throw new Error(`POST /v1/screenshot answered ${res.status}: ${JSON.stringify(body)}`);
        ids.push(body.id);
      }
    }),
  );
  for (;;) {
    const { rows } = await side.db.query<{ ended: number; failed: number }>(
      `SELECT count(*)::int AS ended, (count(*) FILTER (WHERE status = 'failed'))::int AS failed
         FROM screenshot_jobs WHERE id = ANY($1) AND status IN ('done', 'failed')`,
      [ids],
    );
    if (rows[0].ended === ids.length) {
      if (rows[0].failed) console.log(`  ${side.tree}: ${rows[0].failed} failed`);
      return;
    }
    await sleep(20);
  }
}

/** Creates the side's database, account and key (through its own CLI), starts its service and warms it (one capture per site). */
async function start(side: Side, urls: string[]): Promise<void> {
  const cli = (...args: string[]) =>
    JSON.parse(
      execFileSync(process.execPath, [join(side.tree, 'dist/cli.js'), ...args, '--json'], { env: serviceEnv(side, 0), encoding: 'utf8' })
        .trim()
        .split('\n')
        .pop() as string,
    );
  cli('account:create', '--email', 'bench-cpu@localhost', '--plan', 'legacy_free');
  side.key = cli('key:create', '--account', 'bench-cpu@localhost', '--name', 'bench').key;
  const port = await freePort();
  side.baseUrl = `http://127.0.0.1:${port}`;
  side.proc = spawn(process.execPath, [...side.nodeArgs, join(side.tree, 'dist/main.js')], {
    env: serviceEnv(side, port),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (side.proc.exitCode !== null) throw new Error(`the service of ${side.tree} exited with ${side.proc.exitCode}`);
    if (
      await fetch(`${side.baseUrl}/health`).then(
        () => true,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) throw new Error(`the service of ${side.tree} was not up in 60 s`);
    await sleep(200);
  }
  await runJobs(side, urls, urls.length);
}

async function stop(side: Side): Promise<void> {
  const proc = side.proc;
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  await side.db.end();
  await dropBenchState(side.database, side.prefix);
  rmSync(side.storageDir, { recursive: true, force: true });
}

async function main(): Promise<void> {
  const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  console.log(`Node CPU per capture, simple page: batches of ${BATCH}, ${ROUNDS} round(s); load average ${loadAverage()}`);
  console.log(`A fixed JavaScript loop took ${fixedLoopMs().toFixed(0)} ms (docs/performance.md gives its time on a quiet machine)`);
  const trees = [
    { tree: OWN, nodeArgs: process.env.BENCH_SERVICE_NODE_ARGS ?? '' },
    ...(process.env.BENCH_COMPARE_ROOT
      ? [{ tree: resolve(process.env.BENCH_COMPARE_ROOT), nodeArgs: process.env.BENCH_COMPARE_NODE_ARGS ?? '' }]
      : []),
  ];
  const sides: Side[] = [];
  for (const [i, { tree, nodeArgs }] of trees.entries()) {
    const database = `glimpse_bench_${runId}_${i}`;
    sides.push({
      tree,
      nodeArgs: nodeArgs.split(' ').filter(Boolean),
      database,
      prefix: database,
      storageDir: mkdtempSync(join(tmpdir(), 'glimpse-bench-cpu-')),
      db: await createBenchDatabase(database),
      proc: null,
      baseUrl: '',
      key: '',
      perCapture: [],
      idle: [],
    });
  }
  const sites = spawn(process.execPath, [join(OWN, 'bench/page-sites.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((r, j) => {
      createInterface({ input: sites.stdout as NodeJS.ReadableStream }).once('line', r);
      sites.once('exit', (code) => j(new Error(`page-sites exited with ${code}`)));
    });
    const urls = (JSON.parse(line) as { simple: string[] }).simple;
    for (const side of sides) await start(side, urls);
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 ? [...sides].reverse() : sides) {
        const pid = side.proc?.pid as number;
        await sleep(1_000);
        const idle0 = processCpuMs(pid);
        await sleep(IDLE_SAMPLE_MS);
        side.idle.push((processCpuMs(pid) - idle0) / (IDLE_SAMPLE_MS / 1000));
        const cpu0 = processCpuMs(pid);
        const t0 = performance.now();
        await runJobs(side, urls, BATCH);
        const perSecond = BATCH / ((performance.now() - t0) / 1000);
        side.perCapture.push((processCpuMs(pid) - cpu0) / BATCH);
        console.log(
          `  round ${round + 1}, ${side.tree}: ${side.perCapture.at(-1)?.toFixed(1)} ms per capture at ${perSecond.toFixed(2)}/s ` +
            `(idle before it ${side.idle.at(-1)?.toFixed(0)} ms/s); load ${loadAverage()}`,
        );
      }
    }
    console.log(`\nSummary (load average now ${loadAverage()}):`);
    for (const side of sides) {
      const mean = side.perCapture.reduce((a, b) => a + b, 0) / side.perCapture.length;
      console.log(
        `  ${side.tree}: Node CPU per capture ${mean.toFixed(1)} ms (batches ${Math.min(...side.perCapture).toFixed(1)}–` +
          `${Math.max(...side.perCapture).toFixed(1)}), idle ${Math.min(...side.idle).toFixed(0)}–${Math.max(...side.idle).toFixed(0)} ms/s`,
      );
    }
  } finally {
    for (const side of sides) await stop(side);
    sites.kill();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
