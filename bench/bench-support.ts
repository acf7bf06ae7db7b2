import { ChildProcess, spawn } from 'node:child_process';
import Redis from 'ioredis';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Browser } from 'playwright';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source';

// The services a benchmark starts inherit this environment: like the tests (test/support/global-setup.ts)
// they run Chromium without its sandbox unless CHROMIUM_SANDBOX is set, since the benchmark machines run
// as root, where it cannot start (docs/security.md). Said once, loudly.
if (process.env.CHROMIUM_SANDBOX === undefined) {
  process.env.CHROMIUM_SANDBOX = 'off';
  process.stderr.write(
    'WARNING: the benchmark runs Chromium WITHOUT its sandbox (CHROMIUM_SANDBOX=off; set CHROMIUM_SANDBOX=on, as a non-root user, to measure with it)\n',
  );
}

/** The directory of the local PostgreSQL server's Unix socket (Debian's default). */
const POSTGRES_SOCKET_DIR = '/var/run/postgresql';

/**
 * The PostgreSQL server the benchmarks create their databases on (`BENCH_ADMIN_DATABASE_URL`); by
 * default the local server through its Unix socket when the socket exists (the recommended local
 * setting, docs/configuration.md), else over TCP on 127.0.0.1:5432.
 */
export const ADMIN_URL =
  process.env.BENCH_ADMIN_DATABASE_URL ??
  (existsSync(join(POSTGRES_SOCKET_DIR, '.s.PGSQL.5432'))
    ? `postgresql://postgres@localhost/postgres?host=${POSTGRES_SOCKET_DIR}`
    : 'postgres://postgres@127.0.0.1:5432/postgres');
/** The Redis the benchmarks' services use (`REDIS_URL`). */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** How the benchmarks reach PostgreSQL, for their header: `Unix socket /var/run/postgresql` or `TCP 127.0.0.1:5432`. */
export function postgresConnection(): string {
  const url = new URL(ADMIN_URL);
  const socket = url.searchParams.get('host');
  return socket ? `Unix socket ${socket}` : `TCP ${url.host}`;
}

/** The URL of database `database` on the {@link ADMIN_URL} server. */
export function benchDatabaseUrl(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Creates the throw-away database `database` of a benchmark run with every migration applied, and
 * returns a client connected to it (the caller ends it). Throws what PostgreSQL throws.
 */
export async function createBenchDatabase(database: string): Promise<Client> {
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  const ds = new DataSource(dataSourceOptions({ databaseUrl: benchDatabaseUrl(database) }));
  await ds.initialize();
  await ds.runMigrations();
  await ds.destroy();
  const db = new Client({ connectionString: benchDatabaseUrl(database) });
  await db.connect();
  return db;
}

/** Drops what a benchmark run left: its database (sessions ended) and the Redis keys under `redisPrefix`. */
export async function dropBenchState(database: string, redisPrefix: string): Promise<void> {
  const cleanup = new Client({ connectionString: ADMIN_URL });
  await cleanup.connect();
  await cleanup.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await cleanup.end();
  const redis = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = nextCursor;
  } while (cursor !== '0');
  await redis.quit();
}

/** A number from the environment variable `name` (a benchmark's setting), else `fallback`. */
export const envNumber = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The machine's load averages (1, 5, 15 min), printed beside the figures. */
export const loadAverage = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** The `p`th percentile of `values` (the value at rank ⌊p/100 · n⌋ of the sorted values); NaN for none. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/** Clock ticks per second of /proc/<pid>/stat times (Linux: 100). */
const CLK_TCK = 100;

/** Own CPU ms (user + system, without children) of process `pid` from /proc/<pid>/stat (10 ms ticks); 0 once it has exited. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** pid → parent pid for every process. */
export function processTable(): Map<number, number> {
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

/** `root` and every process below it (pids). */
export function descendants(root: number): number[] {
  const table = processTable();
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of table) if (ppid === out[i]) out.push(pid);
  return out;
}

/** CPU time of the live processes `pids`, own and reaped children, split into user and system (kernel) time, ms. */
export function cpuSplitMsOf(pids: number[]): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[11..14] = utime, stime, cutime, cstime (stat fields 14-17).
      user += Number(fields[11]) + Number(fields[13]);
      system += Number(fields[12]) + Number(fields[14]);
    } catch {
      /* gone */
    }
  }
  return { user: (user * 1000) / CLK_TCK, system: (system * 1000) / CLK_TCK };
}

/** CPU time (user + system, own and reaped children) of the live processes `pids`, ms. */
export function cpuMsOf(pids: number[]): number {
  const { user, system } = cpuSplitMsOf(pids);
  return user + system;
}

/** Whether process `pid` is a Chromium process (its command line names it); false once it has exited. */
export function isChromium(pid: number): boolean {
  try {
    return /chrom/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return false;
  }
}

/** The Chromium processes started by this process (its direct children; their renderers are below them). */
export function chromiumChildren(): number[] {
  return [...processTable()].filter(([pid, ppid]) => ppid === process.pid && isChromium(pid)).map(([pid]) => pid);
}

/**
 * One capture as the script a user would write does it (docs/performance.md, "The figures": the raw
 * script): a fresh 1280×800 context, `goto` until `load` (30 s at most), a PNG `page.screenshot`, the
 * context closed. Throws what Playwright throws.
 */
export async function rawCapture(browser: Browser, url: string): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
    await page.screenshot({ type: 'png' });
  } finally {
    await context.close();
  }
}

/** CPU ms of a process tree so far; the difference of two readings is the tree's CPU in between. */
export function treeCpuMs(root: number): number {
  return cpuMsOf(descendants(root));
}

/** A free TCP port on 127.0.0.1 (bound and released). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Spawns `dist/<entry>.js` of the checkout `root` (optionally with `-r preload`), its output inherited,
 * and resolves once `url` answers 200. Throws when the process exits first or is not up within 90 s.
 */
export async function startProcess(
  root: string,
  entry: 'main' | 'worker',
  env: NodeJS.ProcessEnv,
  url: string,
  preload?: string,
): Promise<ChildProcess> {
  const args = [...(preload ? ['-r', preload] : []), join(root, `dist/${entry}.js`)];
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${entry}.js exited with ${proc.exitCode}`);
    if ((await fetch(url).catch(() => null))?.ok) return proc;
    if (Date.now() > deadline) throw new Error(`${entry}.js was not up in 90 s`);
    await sleep(200);
  }
}

/** Stops a process started by {@link startProcess}: SIGTERM, then SIGKILL after 30 s; resolves when it exited. */
export async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}
