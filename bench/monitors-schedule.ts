/**
 * `npm run bench:monitors-schedule`: the monitors' schedule under a burst (docs/monitors.md,
 * "Schedule: measured"), against real processes: BENCH_MONITORS monitors (default 1,000) whose one slot
 * each falls due within the same BENCH_SPREAD_S seconds (default 60), claimed by BENCH_WORKERS
 * `dist/worker.js` processes (default 2) on a throw-away database and Redis prefix, each check a real
 * capture of a small loopback page (bench/page-sites.js). Counted in PostgreSQL: every slot checked
 * exactly once and none twice, which worker claimed it, one job and one quota unit per check; printed:
 * the schedule's lag (check created − slot due) p50/p99/max, and how far the captures got.
 *
 * The monitors are created through the API (`dist/main.js`, `WORKER_MODE=off`, stopped before the
 * burst) paused, with a one-hour interval (one slot each in the run); then one UPDATE resumes them
 * with `next_check_at` spread over the window, starting BENCH_LEAD_S s later (default 5).
 *
 * Knobs (environment): BENCH_MONITORS (1000), BENCH_WORKERS (2), BENCH_SPREAD_S (60; 0: all due at
 * once), BENCH_TICK_MS (`MONITOR_TICK_MS` of the workers; 2000, the default), BENCH_CAPTURE_WAIT_S
 * (how long to wait for the captures after the last claim; 120). Figures only, no assertions.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { planLimit } from '../src/accounts/plan';
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
  startProcess,
  stopProcess,
} from './bench-support';

const MONITORS = envNumber('BENCH_MONITORS', 1000);
const WORKERS = envNumber('BENCH_WORKERS', 2);
const SPREAD_S = envNumber('BENCH_SPREAD_S', 60);
const LEAD_S = envNumber('BENCH_LEAD_S', 5);
const TICK_MS = envNumber('BENCH_TICK_MS', 2000);
const CAPTURE_WAIT_S = envNumber('BENCH_CAPTURE_WAIT_S', 120);
/** Each monitor's interval, s: long enough that the run sees one slot of each. */
const INTERVAL_S = 3600;
const ROOT = resolve(__dirname, '..');

const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const database = `glimpse_bench_${runId}`;
const queuePrefix = `glimpse_bench_${runId}`;
const dbUrl = benchDatabaseUrl(database);
const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-bench-monitors-'));

/**
 * Bench instrumentation in the throw-away database: the slot each monitor is due at (written by the
 * burst's UPDATE), and which process (`application_name`, from `PGAPPNAME`) inserted each check.
 */
const INSTRUMENT_SQL = `
  CREATE TABLE bench_slots (monitor_id varchar PRIMARY KEY, due timestamptz NOT NULL);
  CREATE TABLE bench_check_by (check_id varchar PRIMARY KEY, claimed_by text NOT NULL);
  CREATE FUNCTION bench_record_check() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    INSERT INTO bench_check_by VALUES (NEW.id, current_setting('application_name'));
    RETURN NEW;
  END $$;
  CREATE TRIGGER bench_check_by AFTER INSERT ON monitor_checks FOR EACH ROW EXECUTE FUNCTION bench_record_check();`;

function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: dbUrl,
    REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    STORAGE_DIR: storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    MONITOR_TICK_MS: String(TICK_MS),
    ...extra,
  };
}

function cli(...args: string[]): any {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args, '--json'], { env: serviceEnv({}), encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() as string);
}

async function startPageSite(): Promise<{ proc: ChildProcess; page: string }> {
  const proc = spawn(process.execPath, [join(ROOT, 'bench/page-sites.js')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SITES: '1' },
  });
  const line = await new Promise<string>((r, j) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).once('line', r);
    proc.once('exit', (code) => j(new Error(`page-sites exited with ${code}`)));
  });
  return { proc, page: (JSON.parse(line) as { simple: string[] }).simple[0] };
}

/**
 * POSTs, sending again (same `Idempotency-Key`) when the connection was closed under it: on a loaded
 * machine a kept-alive connection can be closed by the server as the next request goes out.
 */
async function post(url: string, init: { headers: Record<string, string>; body: string }): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, { method: 'POST', ...init });
    } catch (err) {
      if (attempt >= 3) throw err;
      await sleep(200);
    }
  }
}

/** Creates `count` paused monitors through the API, as many accounts (pro plan) as the plan limit needs. */
async function createMonitors(page: string, count: number): Promise<void> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = await startProcess(
    ROOT,
    'main',
    serviceEnv({ PORT: String(port), WORKER_MODE: 'off', PGAPPNAME: 'api' }),
    `${baseUrl}/health`,
  );
  try {
    const perAccount = planLimit('pro', 'monitors');
    for (let account = 0; account * perAccount < count; account++) {
      const email = `bench-monitors-${runId}-${account}@localhost`;
      cli('account:create', '--email', email, '--plan', 'pro');
      const key: string = cli('key:create', '--account', email, '--name', 'bench').key;
      const todo = Array.from({ length: Math.min(perAccount, count - account * perAccount) }, (_, i) => account * perAccount + i);
      const create = async () => {
        for (let i = todo.shift(); i !== undefined; i = todo.shift()) {
          const res = await post(`${baseUrl}/v1/monitors`, {
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `bench-${runId}-${i}` },
            body: JSON.stringify({
              url: `${page}?m=${i}`,
              width: 320,
              height: 240,
              enabled: false,
              schedule: { intervalSeconds: INTERVAL_S },
            }),
          });
          if (res.status !== 201) throw new Error(`POST /v1/monitors answered ${res.status}: ${await res.text()}`);
        }
      };
      await Promise.all(Array.from({ length: 8 }, create));
    }
  } finally {
    await stopProcess(api);
  }
}

async function main(): Promise<void> {
  console.log(
    `Glimpse monitor schedule benchmark (run ${runId}): ${cpus().length} CPUs, load average ${loadAverage()}; ` +
      `${MONITORS} monitors due within ${SPREAD_S} s, ${WORKERS} worker processes, MONITOR_TICK_MS ${TICK_MS}`,
  );
  const db = await createBenchDatabase(database);
  await db.query(INSTRUMENT_SQL);
  const site = await startPageSite();
  const workers: ChildProcess[] = [];
  try {
    const createdAt = Date.now();
    await createMonitors(site.page, MONITORS);
    console.log(`  ${MONITORS} paused monitors created through the API in ${((Date.now() - createdAt) / 1000).toFixed(1)} s`);
    for (let w = 1; w <= WORKERS; w++) {
      const port = await freePort();
      workers.push(
        await startProcess(
          ROOT,
          'worker',
          serviceEnv({ WORKER_HEALTH_PORT: String(port), PGAPPNAME: `worker-${w}` }),
          `http://127.0.0.1:${port}/ready`,
        ),
      );
    }
    const start = new Date(Date.now() + LEAD_S * 1000);
    const end = new Date(start.getTime() + SPREAD_S * 1000);
    await db.query(
      `WITH resumed AS (
         UPDATE monitors SET enabled = true, paused_reason = NULL,
                next_check_at = $1::timestamptz + floor(random() * $2) * interval '1 millisecond'
         RETURNING id, next_check_at)
       INSERT INTO bench_slots SELECT id, next_check_at FROM resumed`,
      [start, SPREAD_S * 1000],
    );
    console.log(`\n[burst] ${MONITORS} slots due from ${start.toISOString()} to ${end.toISOString()}; load ${loadAverage()}`);

    const counts = async () =>
      (
        await db.query(
          `SELECT (SELECT count(*)::int FROM monitor_checks) AS checks,
                  (SELECT count(*)::int FROM screenshot_jobs WHERE status IN ('done', 'failed')) AS ended`,
        )
      ).rows[0] as { checks: number; ended: number };
    const claimDeadline = end.getTime() + 120_000;
    let now = await counts();
    while (now.checks < MONITORS && Date.now() < claimDeadline) {
      await sleep(1000);
      now = await counts();
    }
    const claimedAt = Date.now();
    console.log(
      `  ${now.checks} checks ${((claimedAt - end.getTime()) / 1000).toFixed(1)} s after the last slot was due; load ${loadAverage()}`,
    );
    const captureDeadline = claimedAt + CAPTURE_WAIT_S * 1000;
    while (now.ended < now.checks && Date.now() < captureDeadline) {
      await sleep(1000);
      now = await counts();
    }
    const capturesEndedAt = Date.now();

    const { rows: lags } = await db.query(
      `SELECT extract(epoch FROM c.created_at - s.due) * 1000 AS lag_ms FROM monitor_checks c JOIN bench_slots s ON s.monitor_id = c.monitor_id`,
    );
    const lagMs = lags.map((r: { lag_ms: string }) => Number(r.lag_ms));
    const { rows: slots } = await db.query(
      `SELECT count(*) FILTER (WHERE n = 0)::int AS unchecked, count(*) FILTER (WHERE n = 1)::int AS once, count(*) FILTER (WHERE n > 1)::int AS twice
         FROM (SELECT s.monitor_id, count(c.id) AS n FROM bench_slots s LEFT JOIN monitor_checks c ON c.monitor_id = s.monitor_id GROUP BY s.monitor_id) per`,
    );
    const { rows: byWorker } = await db.query(
      `SELECT claimed_by, count(*)::int AS n FROM bench_check_by GROUP BY claimed_by ORDER BY claimed_by`,
    );
    const { rows: totals } = await db.query(
      `SELECT (SELECT count(*)::int FROM screenshot_jobs) AS jobs,
              (SELECT count(DISTINCT job_id)::int FROM monitor_checks) AS check_jobs,
              (SELECT coalesce(sum(used), 0)::int FROM quota_usage) AS used,
              (SELECT count(*)::int FROM screenshot_jobs WHERE status = 'done') AS done,
              (SELECT count(*)::int FROM screenshot_jobs WHERE status = 'failed') AS failed,
              (SELECT count(*)::int FROM monitor_checks WHERE status = 'failed' AND job_id IS NULL) AS refused`,
    );
    const t = totals[0];
    console.log(`\nSummary (load average now ${loadAverage()}; the machine may be shared with other work):`);
    console.log(`  slots: ${MONITORS} due; checked once ${slots[0].once}, twice or more ${slots[0].twice}, never ${slots[0].unchecked}`);
    console.log(`  checks by worker: ${byWorker.map((r: { claimed_by: string; n: number }) => `${r.claimed_by} ${r.n}`).join(', ')}`);
    console.log(
      `  schedule lag (check created − slot due): p50 ${percentile(lagMs, 50).toFixed(0)} ms, p99 ${percentile(lagMs, 99).toFixed(0)} ms, ` +
        `max ${Math.max(...lagMs).toFixed(0)} ms (MONITOR_TICK_MS ${TICK_MS})`,
    );
    console.log(
      `  jobs ${t.jobs} (${t.check_jobs} distinct jobs of checks, ${t.refused} checks refused), quota counted ${t.used}; ` +
        `captures done ${t.done}, failed ${t.failed}, open ${t.jobs - t.done - t.failed} ` +
        `${((capturesEndedAt - start.getTime()) / 1000).toFixed(0)} s after the first slot was due`,
    );
  } finally {
    for (const w of workers) await stopProcess(w);
    site.proc.kill();
    await db.end();
    await dropBenchState(database, `${queuePrefix}`);
    rmSync(storageDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
