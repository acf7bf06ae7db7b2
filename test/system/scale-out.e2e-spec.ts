import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { EventRecord } from '../../src/events/event.entity';
import { ScreenshotJob } from '../../src/screenshots/screenshot-job.entity';
import { buildDist } from '../support/outage';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp } from '../support/test-app';

const ROOT = join(__dirname, '../..');
const JOBS = 50;

/**
 * docs/operations.md#processes-and-deployment: the API with `WORKER_MODE=off` plus `worker` processes on the same PostgreSQL and
 * Redis. The API runs here (processors off); the two workers are real processes (`dist/worker.js`, built from
 * the current sources by {@link buildDist} when older than them).
 */
describe('scale-out: an API without processors and two worker processes', () => {
  let t: TestApp;
  let key: string;
  let accountId: string;
  const sites: PageServer[] = [];
  const workers: ChildProcess[] = [];

  /** Starts `dist/worker.js` against the test app's database, queue prefix and storage; resolves once it runs. */
  async function startWorker(name: string): Promise<ChildProcess> {
    const proc = spawn(process.execPath, [join(ROOT, 'dist/worker.js')], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: process.env.GLIMPSE_TEST_DATABASE_URL,
        QUEUE_PREFIX: t.config.queuePrefix,
        STORAGE_DIR: t.config.storageDir,
        PUBLIC_BASE_URL: t.config.publicBaseUrl,
        SSRF_ALLOW_PRIVATE: 'true',
        CAPTURE_TIMEOUT_MS: '20000',
        CAPTURE_CONCURRENCY: '2',
        LOG_LEVEL: 'log',
        // An ephemeral health port each: two workers (and parallel test runs) cannot share 3001.
        WORKER_HEALTH_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    workers.push(proc);
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker ${name} did not start: ${output.slice(-2000)}`)), 90_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Worker started')) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout?.on('data', onData);
      proc.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`worker ${name} exited with ${code}: ${output.slice(-2000)}`));
      });
    });
    return proc;
  }

  async function submit(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await t.request('POST', '/v1/screenshot', {
        key,
        body: { url: `${sites[i % sites.length].url}/page`, width: 400, height: 300 },
      });
      expect(res.status).toBe(202);
      ids.push(res.body.id);
    }
    return ids;
  }

  /** Job statuses by id, read from the shared database. */
  async function statuses(ids: string[]): Promise<Map<string, string>> {
    const jobs = await t
      .get(DataSource)
      .getRepository(ScreenshotJob)
      .createQueryBuilder('j')
      .select(['j.id', 'j.status'])
      .where('j.id IN (:...ids)', { ids })
      .getMany();
    return new Map(jobs.map((j) => [j.id, j.status]));
  }

  async function waitUntilEnded(ids: string[], timeoutMs: number): Promise<Map<string, string>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const byId = await statuses(ids);
      if ([...byId.values()].every((s) => s === 'done' || s === 'failed')) return byId;
      if (Date.now() > deadline) return byId;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** `screenshot.completed` / `screenshot.failed` events per job id. */
  async function eventsPerJob(): Promise<Map<string, string[]>> {
    const events = await t.get(DataSource).getRepository(EventRecord).findBy({ accountId });
    const byJob = new Map<string, string[]>();
    for (const e of events) {
      const id = (e.data as { screenshotId?: string }).screenshotId;
      if (id) byJob.set(id, [...(byJob.get(id) ?? []), e.type]);
    }
    return byJob;
  }

  beforeAll(async () => {
    buildDist();
    for (let i = 1; i <= 4; i++) {
      sites.push(
        await startPageServer({ '/page': `<html><body style="background:#fff"><h1>site ${i}</h1></body></html>` }, `127.0.0.${i}`),
      );
    }
    t = await startTestApp({ runProcessors: false });
    ({ key, accountId } = await t.createKey('pro'));
    await Promise.all([startWorker('a'), startWorker('b')]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.exitCode !== null || w.signalCode !== null) return resolve();
            w.once('exit', () => resolve());
            w.kill('SIGTERM');
            setTimeout(() => w.kill('SIGKILL'), 60_000).unref();
          }),
      ),
    );
    await t?.close();
    for (const s of sites) await s.close();
  }, 120_000);

  it(`${JOBS} jobs each end done exactly once`, async () => {
    const ids = await submit(JOBS);
    const byId = await waitUntilEnded(ids, 240_000);
    expect([...byId.values()].filter((s) => s !== 'done')).toEqual([]);
    const events = await eventsPerJob();
    for (const id of ids) expect(events.get(id)).toEqual(['screenshot.completed']);
    const attempts = await t
      .get(DataSource)
      .getRepository(ScreenshotJob)
      .createQueryBuilder('j')
      .select('max(j.attempts)', 'max')
      .where('j.id IN (:...ids)', { ids })
      .getRawOne();
    expect(Number(attempts.max)).toBe(1);
  }, 300_000);

  it(`SIGKILL of one worker mid-run loses none of ${JOBS} jobs: each ends done or failed, once`, async () => {
    const ids = await submit(JOBS);
    // Let both workers get going, then kill one while it holds jobs. A worker claims a job only when one
    // of its CAPTURE_CONCURRENCY (2) browser slots is free, so 3 or more `processing` jobs mean both are
    // working (short of one that is storing a result while its slot was taken again).
    const deadline = Date.now() + 120_000;
    for (;;) {
      const now = [...(await statuses(ids)).values()];
      const count = (status: string) => now.filter((s) => s === status).length;
      if ((count('done') >= 10 && count('processing') >= 3) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    workers[0].kill('SIGKILL');
    // Its jobs are redelivered once Bull sees their locks expire (lockDuration 30 s, stalled check every 15 s).
    const byId = await waitUntilEnded(ids, 240_000);
    expect([...byId.values()].filter((s) => s !== 'done' && s !== 'failed')).toEqual([]);
    expect(byId.size).toBe(JOBS);
    // The killed worker held jobs: they were claimed again by the survivor (a second attempt).
    const redelivered = await t
      .get(DataSource)
      .getRepository(ScreenshotJob)
      .createQueryBuilder('j')
      .where('j.id IN (:...ids) AND j.attempts > 1', { ids })
      .getCount();
    expect(redelivered).toBeGreaterThan(0);
    const events = await eventsPerJob();
    for (const id of ids) {
      expect(events.get(id)).toHaveLength(1);
      expect(events.get(id)?.[0]).toBe(byId.get(id) === 'done' ? 'screenshot.completed' : 'screenshot.failed');
    }
  }, 360_000);
});
