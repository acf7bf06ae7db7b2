/**
 * `npm run bench:hostile-glob`: the worker's event loop while hostile `blockUrls` captures run
 * (CONTRACT.md, "Tenancy: fair share and isolation": no input runs super-linear on a worker; docs/
 * capture-options.md, "Second set"). Real processes on a throw-away database and Redis prefix: the API
 * (`dist/main.js`, `WORKER_MODE=off`) and one worker (`dist/worker.js`) into which a probe is preloaded
 * (`perf_hooks.monitorEventLoopDelay`, 1 ms resolution, read over the IPC channel). BENCH_CAPTURES
 * captures (default 10) are sent at once, each with `blockUrls` of BENCH_GLOBS hostile globs (default 1:
 * `*a*a*a*a*a*a*a*aZ`, then more stars) on a loopback page of BENCH_IMAGES images (default 10) whose
 * paths are 74 `a`s, after the same captures without `blockUrls` (the control). Printed, for each: the worker's event-loop delay p50/p99/max while they ran (target p99 <
 * 50 ms) with its loop utilisation and CPU time (a busy machine delays a loop that is mostly idle: the
 * samples then measure the machine), the captures' outcome, and, for comparison, the matcher on the same glob and URL: today's in
 * this process, and the former regular expression in a worker thread stopped after BENCH_OLD_LIMIT_MS
 * (default 10,000). Figures only, no assertions.
 */
import { ChildProcess, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { compileGlob } from '../src/common/url-glob';
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

const CAPTURES = envNumber('BENCH_CAPTURES', 10);
const GLOBS = envNumber('BENCH_GLOBS', 1);
const IMAGES = envNumber('BENCH_IMAGES', 10);
const OLD_LIMIT_MS = envNumber('BENCH_OLD_LIMIT_MS', 10_000);
const ROOT = resolve(__dirname, '..');
const A74 = 'a'.repeat(74);
/** The hostile globs: `*a*a*a*a*a*a*a*aZ`, then one more `a*` each. */
const globs = Array.from({ length: GLOBS }, (_, i) => `*${'a*'.repeat(7 + i)}aZ`);

const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
const database = `glimpse_bench_${runId}`;
const queuePrefix = `glimpse_bench_${runId}`;
const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-bench-glob-'));

/** Preloaded into the worker: its event-loop delay, reset and read over the IPC channel. */
const PROBE = `
const { monitorEventLoopDelay, performance } = require('node:perf_hooks');
const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
let elu = performance.eventLoopUtilization();
let cpu = process.cpuUsage();
process.on('message', (m) => {
  if (m === 'reset') { h.reset(); elu = performance.eventLoopUtilization(); cpu = process.cpuUsage(); process.send({ reset: true }); }
  if (m === 'read') {
    const used = process.cpuUsage(cpu);
    process.send({
      p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6, count: h.count,
      utilization: performance.eventLoopUtilization(elu).utilization, cpuMs: (used.user + used.system) / 1000,
    });
  }
});
process.channel && process.channel.unref();
`;

function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: benchDatabaseUrl(database),
    REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    STORAGE_DIR: storageDir,
    SSRF_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

function cli(...args: string[]): any {
  const out = execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args, '--json'], { env: serviceEnv({}), encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() as string);
}

/** Sends `message` to the probe in `worker` and resolves with its answer. */
function probe(worker: ChildProcess, message: 'reset' | 'read'): Promise<any> {
  return new Promise((r) => {
    worker.once('message', r);
    worker.send(message);
  });
}

/** The former `blockUrls` matcher (a regular expression per glob) on `url`, in a worker thread stopped after `limitMs`. */
function oldMatcherMs(glob: string, url: string, limitMs: number): Promise<number | null> {
  const worker = new Worker(
    `const { parentPort, workerData: { glob, url } } = require('node:worker_threads');
     const re = new RegExp('^' + glob.split('*').map((p) => p.replace(/[.+?^\${}()|[\\]\\\\/-]/g, '\\\\$&')).join('.*') + '$', 's');
     const t = performance.now(); re.test(url); parentPort.postMessage(performance.now() - t);`,
    { eval: true, workerData: { glob, url } },
  );
  return new Promise((r) => {
    const timer = setTimeout(() => void worker.terminate().then(() => r(null)), limitMs);
    worker.once('message', (ms: number) => {
      clearTimeout(timer);
      void worker.terminate();
      r(ms);
    });
  });
}

async function main(): Promise<void> {
  console.log(
    `Glimpse hostile-glob benchmark (run ${runId}): ${cpus().length} CPUs, load average ${loadAverage()}; ` +
      `${CAPTURES} captures at once, blockUrls ${JSON.stringify(globs)}, ${IMAGES} images of 74 a's each`,
  );
  const images = Array.from({ length: IMAGES }, (_, i) => `/${A74}${i}.png`);
  const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
  let imageHits = 0;
  const site = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (images.includes(path)) {
      imageHits++;
      res.writeHead(200, { 'content-type': 'image/gif' }).end(gif);
    } else
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<!doctype html><body>${images.map((p) => `<img src="${p}">`).join('')}</body>`);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const page = `http://127.0.0.1:${(site.address() as AddressInfo).port}/page`;
  const probePath = join(storageDir, 'loop-probe.js');
  writeFileSync(probePath, PROBE);

  const db = await createBenchDatabase(database);
  await db.end();
  const apiPort = await freePort();
  const healthPort = await freePort();
  const baseUrl = `http://127.0.0.1:${apiPort}`;
  const procs: ChildProcess[] = [];
  try {
    procs.push(await startProcess(ROOT, 'main', serviceEnv({ PORT: String(apiPort), WORKER_MODE: 'off' }), `${baseUrl}/health`));
    const worker = await startProcess(
      ROOT,
      'worker',
      serviceEnv({ WORKER_HEALTH_PORT: String(healthPort) }),
      `http://127.0.0.1:${healthPort}/ready`,
      probePath,
    );
    procs.push(worker);
    const email = `bench-glob-${runId}@localhost`;
    cli('account:create', '--email', email, '--plan', 'pro');
    const key: string = cli('key:create', '--account', email, '--name', 'bench').key;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const capture = async (body: object): Promise<{ status: string; ms: number }> => {
      const started = performance.now();
      const res = await fetch(`${baseUrl}/v1/screenshot`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: page, width: 320, height: 240, ...body }),
      });
      if (res.status !== 202) throw new Error(`POST /v1/screenshot answered ${res.status}: ${await res.text()}`);
      const { id } = (await res.json()) as { id: string };
      for (;;) {
        const job = (await (await fetch(`${baseUrl}/v1/screenshot/${id}`, { headers })).json()) as { status: string };
        if (job.status === 'done' || job.status === 'failed') return { status: job.status, ms: performance.now() - started };
        await sleep(100);
      }
    };
    // One capture first: the worker launches its browser (not measured).
    await capture({});
    // The same captures without blockUrls first: the control, on the same machine at the same time.
    for (const [name, body] of [
      ['without blockUrls (control)', {}],
      ['with the hostile blockUrls', { blockUrls: globs }],
    ] as const) {
      imageHits = 0;
      await probe(worker, 'reset');
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: CAPTURES }, () => capture(body)));
      const wallMs = performance.now() - started;
      const loop = await probe(worker, 'read');
      const done = results.filter((r) => r.status === 'done').length;
      console.log(
        `${CAPTURES} captures ${name}: ${done} done, ${imageHits} image requests served (${CAPTURES * IMAGES} expected), ` +
          `${(wallMs / 1000).toFixed(1)} s; worker event-loop delay (${loop.count} samples at 1 ms) ` +
          `p50 ${loop.p50.toFixed(1)} ms, p99 ${loop.p99.toFixed(1)} ms (target < 50), max ${loop.max.toFixed(1)} ms; ` +
          `loop busy ${(loop.utilization * 100).toFixed(0)} %, worker CPU ${(loop.cpuMs / 1000).toFixed(2)} s`,
      );
    }
  } finally {
    for (const proc of procs.reverse()) await stopProcess(proc);
    site.close();
    await dropBenchState(database, queuePrefix);
    rmSync(storageDir, { recursive: true, force: true });
  }

  const url = `http://127.0.0.1:8080/${A74}.png`;
  const match = compileGlob(globs[0]);
  const t = performance.now();
  for (let i = 0; i < 1000; i++) match(url);
  // 1,000 matches: their total in ms is the mean of one in µs.
  console.log(`matcher on ${globs[0]} and a URL of 74 a's: ${(performance.now() - t).toFixed(1)} µs per match (mean of 1,000)`);
  const old = await oldMatcherMs(globs[0], url, OLD_LIMIT_MS);
  console.log(
    old === null
      ? `former RegExp matcher, same glob and URL: no answer within ${OLD_LIMIT_MS} ms (worker thread terminated)`
      : `former RegExp matcher, same glob and URL: ${old.toFixed(0)} ms`,
  );
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
