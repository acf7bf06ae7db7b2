import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { PageServer, startPageServer } from '../support/page-server';
import { buildDist, createKey, PostgresCluster, RedisServer, ServiceProcess, sleep, waitFor } from '../support/outage';

/**
 * Issue 16, findings 1–4, reproduced against real processes (`dist/main.js`, `dist/worker.js`), a
 * PostgreSQL cluster and a redis-server of the test's own on loopback ports. Each scenario ends with
 * every accepted job `done` or `failed`, the quota counter equal to the jobs accepted, and no job twice.
 * The figures (accepted, ended, duplicated, recovery time) are printed for the note.
 */

const DEPENDENCY_TIMEOUT_MS = 5000;

interface Answer {
  status: number;
  body: any;
  ms: number;
  retryAfter: string | null;
}

async function post(baseUrl: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const started = Date.now();
  try {
    const res = await fetch(`${baseUrl}/v1/screenshot`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keep the text */
    }
    return { status: res.status, body: parsed, ms: Date.now() - started, retryAfter: res.headers.get('retry-after') };
  } catch {
    // The connection was cut (the API was killed): no answer.
    return { status: 0, body: null, ms: Date.now() - started, retryAfter: null };
  }
}

/** Reads the scenario's database directly: the source of truth. A pool, so it outlives a PostgreSQL restart. */
class Db {
  private constructor(private readonly client: Pool) {}
  static async open(url: string): Promise<Db> {
    const pool = new Pool({ connectionString: url, max: 2 });
    // A stopped server ends idle connections: the pool drops them and connects again when asked.
    pool.on('error', () => undefined);
    return new Db(pool);
  }
  async jobs(keyId: string): Promise<{ id: string; status: string }[]> {
    return (await this.client.query(`SELECT id, status FROM screenshot_jobs WHERE api_key_id = $1`, [keyId])).rows;
  }
  async used(keyId: string): Promise<number> {
    const rows = (await this.client.query(`SELECT COALESCE(SUM(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1`, [keyId])).rows;
    return rows[0].used;
  }
  /** Waits until every job of the key ended; returns the time it took, ms. */
  async allEnded(keyId: string, timeoutMs: number): Promise<number> {
    const started = Date.now();
    await waitFor('every accepted job to end', async () => (await this.jobs(keyId)).every((j) => j.status === 'done' || j.status === 'failed'), timeoutMs, 500);
    return Date.now() - started;
  }
  close(): Promise<void> {
    return this.client.end();
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0;
};

describe('outages (issue 16, findings 1–4): every accepted job ends, quota exact, no duplicate', () => {
  let pg: PostgresCluster;
  let redis: RedisServer;
  let pages: PageServer;
  let storageDir: string;
  const processes: ServiceProcess[] = [];
  let scenario = 0;

  beforeAll(async () => {
    buildDist();
    [pg, redis, pages] = await Promise.all([
      PostgresCluster.start(),
      RedisServer.start(),
      startPageServer({ '/page': '<!doctype html><html><body><h1>outage test</h1></body></html>' }),
    ]);
    storageDir = mkdtempSync(join(tmpdir(), 'glimpse-outage-files-'));
  }, 300_000);

  afterAll(async () => {
    for (const p of processes) await p.kill();
    await redis?.kill();
    pg?.destroy();
    await pages?.close();
    if (storageDir) rmSync(storageDir, { recursive: true, force: true });
  }, 60_000);

  /** A database and queue prefix of the scenario's own, and an environment for its processes. */
  async function setUp(): Promise<{ env: Record<string, string>; db: Db; key: string; keyId: string }> {
    scenario++;
    const databaseUrl = await pg.createDatabase(`outage_${scenario}`);
    const env = {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: `outage${scenario}_${Date.now().toString(36)}`,
      STORAGE_DIR: storageDir,
      SSRF_ALLOW_PRIVATE: 'true',
      CAPTURE_TIMEOUT_MS: '10000',
      CAPTURE_CONCURRENCY: '3',
      CAPTURE_WARM_CONTEXTS: '1',
      DEPENDENCY_TIMEOUT_MS: String(DEPENDENCY_TIMEOUT_MS),
    };
    const { key, keyId } = createKey(databaseUrl, redis.url);
    return { env, db: await Db.open(databaseUrl), key, keyId };
  }

  async function start(entry: 'main' | 'worker', env: Record<string, string>): Promise<ServiceProcess> {
    const service = await ServiceProcess.start(entry, env);
    processes.push(service);
    return service;
  }

  const page = () => ({ url: `${pages.url}/page` });

  it('finding 1: PostgreSQL stopped under load: 503 SERVICE_UNAVAILABLE within the bound, nothing stranded', async () => {
    const { env, db, key, keyId } = await setUp();
    const api = await start('main', { ...env, WORKER_MODE: 'off' });
    await start('worker', env);
    const OUTAGE_MS = 8_000;

    const answers: Answer[] = [];
    let running = true;
    // About 4 POSTs per second, before, during and after the outage.
    const load = (async () => {
      const inFlight: Promise<void>[] = [];
      while (running) {
        inFlight.push(post(api.baseUrl!, key, page()).then((a) => void answers.push(a)));
        await sleep(250);
      }
      await Promise.all(inFlight);
    })();
    await sleep(3_000);
    pg.stop();
    const stoppedAt = Date.now();
    await sleep(OUTAGE_MS);
    await pg.startServer();
    const restartedAt = Date.now();
    await sleep(3_000);
    running = false;
    await load;

    const accepted = answers.filter((a) => a.status === 202);
    const unavailable = answers.filter((a) => a.status === 503);
    const ended = await db.allEnded(keyId, 120_000);
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    console.log(
      `finding 1 (PostgreSQL stopped ${((restartedAt - stoppedAt) / 1000).toFixed(1)} s under ~4 POST/s): ${answers.length} POSTs, ` +
        `${accepted.length} accepted, ${unavailable.length} × 503 (max ${Math.max(0, ...unavailable.map((a) => a.ms))} ms), ` +
        `other ${answers.length - accepted.length - unavailable.length}; ${jobs.length} job rows, quota ${used}; ` +
        `${jobs.filter((j) => j.status === 'done').length} done, ${jobs.filter((j) => j.status === 'failed').length} failed; ` +
        `duplicates ${accepted.length - new Set(accepted.map((a) => a.body.id)).size}; all ended ${ended} ms after PostgreSQL was back`,
    );
    expect(unavailable.length).toBeGreaterThan(0);
    for (const a of unavailable) {
      expect(a.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: expect.any(String) });
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(a.ms).toBeLessThan(DEPENDENCY_TIMEOUT_MS + 1000);
    }
    expect(answers.every((a) => a.status === 202 || a.status === 503)).toBe(true);
    expect(new Set(accepted.map((a) => a.body.id)).size).toBe(accepted.length);
    // Every accepted job exists; a row exists only for an accepted job (a 503 accepted nothing) and counts once.
    expect(jobs.map((j) => j.id).sort()).toEqual(accepted.map((a) => a.body.id).sort());
    expect(used).toBe(jobs.length);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 240_000);

  it('finding 2: the API SIGKILLed mid-burst, every Idempotency-Key replayed: one job and one count per key', async () => {
    const { env, db, key, keyId } = await setUp();
    await start('worker', env);
    let api = await start('main', { ...env, WORKER_MODE: 'off' });
    const KEYS = 100;
    const CONCURRENCY = 16;
    const keys = Array.from({ length: KEYS }, (_, i) => `outage-burst-${scenario}-${i.toString().padStart(4, '0')}`);
    const first = new Map<string, Answer>();

    let next = 0;
    let killed = false;
    const killAfter = KEYS / 2;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < KEYS && !killed) {
          const idem = keys[next++];
          const answer = await post(api.baseUrl!, key, page(), { 'idempotency-key': idem });
          first.set(idem, answer);
          if (!killed && first.size >= killAfter) {
            killed = true;
            await api.kill('SIGKILL');
          }
        }
      }),
    );
    const cut = [...first.values()].filter((a) => a.status !== 202).length;
    api = await start('main', { ...env, WORKER_MODE: 'off' });
    const restartedAt = Date.now();

    // Replay every key (the ones never sent too) until each is answered 202; 409 while a killed
    // request's lease (60 s) still holds its key.
    const final = new Map<string, Answer>();
    let conflicts = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, lane) => {
        for (let i = lane; i < KEYS; i += CONCURRENCY) {
          for (;;) {
            const answer = await post(api.baseUrl!, key, page(), { 'idempotency-key': keys[i] });
            if (answer.status === 202) {
              final.set(keys[i], answer);
              break;
            }
            expect(answer.status).toBe(409);
            conflicts++;
            await sleep(2_000);
          }
        }
      }),
    );
    const replayed = [...final.values()].filter((a) => a.body && a.status === 202).length;
    const ended = await db.allEnded(keyId, 180_000);
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    const ids = new Set([...final.values()].map((a) => a.body.id));
    for (const [idem, answer] of first) if (answer.status === 202) expect(final.get(idem)!.body.id).toBe(answer.body.id);
    console.log(
      `finding 2 (API SIGKILLed after ${killAfter} of ${KEYS} keyed POSTs, ${CONCURRENCY} at once): ${cut} requests cut or unsent; ` +
        `after restart ${replayed} keys answered 202 (${conflicts} × 409 while a lease held), ${ids.size} distinct jobs, ` +
        `${jobs.length} job rows, quota ${used}, duplicates ${jobs.length - ids.size}; ` +
        `${jobs.filter((j) => j.status === 'done').length} done, ${jobs.filter((j) => j.status === 'failed').length} failed, ` +
        `all ended ${Date.now() - restartedAt} ms after the restart (${ended} ms after the last replay)`,
    );
    expect(ids.size).toBe(KEYS);
    expect(jobs).toHaveLength(KEYS);
    expect(used).toBe(KEYS);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 300_000);

  it('finding 3: Redis restarted empty under a backlog: queued jobs and the repeatable sweeps come back', async () => {
    const { env, db, key, keyId } = await setUp();
    const api = await start('main', { ...env, WORKER_MODE: 'off' });
    await start('worker', env);
    const repeatKeys = () => redis.cli('--scan', '--pattern', `${env.QUEUE_PREFIX}:*:repeat`).trim().split('\n').filter(Boolean);
    await waitFor('the repeatable sweeps to be registered', async () => repeatKeys().length >= 3, 20_000);
    // A backlog: 1 s per capture, 3 at once, so most jobs still wait in the queue when Redis restarts.
    const JOBS = 30;
    const answers = await Promise.all(Array.from({ length: JOBS }, () => post(api.baseUrl!, key, { ...page(), delay: 1000 })));
    expect(answers.every((a) => a.status === 202)).toBe(true);
    await sleep(2_000);
    const pendingAtRestart = (await db.jobs(keyId)).filter((j) => j.status === 'pending').length;
    await redis.kill();
    await redis.startServer();
    const restartedAt = Date.now();
    const ended = await db.allEnded(keyId, 120_000);
    const repeatables = await waitFor('the repeatable sweeps to be registered again', async () => repeatKeys().length >= 3 && repeatKeys(), 40_000);
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    console.log(
      `finding 3 (Redis restarted empty, ${pendingAtRestart} of ${JOBS} jobs waiting in the queue): ${jobs.length} job rows, quota ${used}, ` +
        `${jobs.filter((j) => j.status === 'done').length} done, ${jobs.filter((j) => j.status === 'failed').length} failed, ` +
        `duplicates ${answers.length - new Set(answers.map((a) => a.body.id)).size}; all ended ${ended} ms after Redis came back; ` +
        `repeatable jobs registered again: ${repeatables.map((k) => k.split(':').slice(-2, -1)[0]).sort().join(', ')} (${Date.now() - restartedAt} ms)`,
    );
    expect(pendingAtRestart).toBeGreaterThan(0);
    expect(jobs).toHaveLength(JOBS);
    expect(used).toBe(JOBS);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 240_000);

  it('finding 4: Redis stopped: POSTs answer 202 within DEPENDENCY_TIMEOUT_MS, an instance started meanwhile serves, jobs run when Redis is back', async () => {
    const { env, db, key, keyId } = await setUp();
    const api = await start('main', { ...env, WORKER_MODE: 'off' });
    await redis.kill();
    const stoppedAt = Date.now();
    const before = await Promise.all(Array.from({ length: 10 }, () => post(api.baseUrl!, key, page())));
    // A complete service (API and processors) started while Redis is away starts and serves.
    const inline = await start('main', { ...env, WORKER_MODE: 'inline' });
    const startedMs = Date.now() - stoppedAt;
    const during = await Promise.all(Array.from({ length: 10 }, () => post(inline.baseUrl!, key, page())));
    const answers = [...before, ...during];
    await sleep(2_000);
    expect((await db.jobs(keyId)).every((j) => j.status === 'pending')).toBe(true);
    await redis.startServer();
    const backAt = Date.now();
    const ended = await db.allEnded(keyId, 120_000);
    const jobs = await db.jobs(keyId);
    const used = await db.used(keyId);
    const latencies = answers.map((a) => a.ms);
    console.log(
      `finding 4 (Redis stopped): ${answers.length} POSTs, ${answers.filter((a) => a.status === 202).length} × 202, ` +
        `p50 ${percentile(latencies, 50)} ms, max ${Math.max(...latencies)} ms; an inline instance started without Redis served after ${startedMs} ms; ` +
        `${jobs.length} job rows, quota ${used}, duplicates ${answers.length - new Set(answers.map((a) => a.body.id)).size}; ` +
        `all ${jobs.filter((j) => j.status === 'done').length} done ${ended} ms after Redis came back (${Date.now() - backAt} ms)`,
    );
    expect(answers.every((a) => a.status === 202)).toBe(true);
    expect(Math.max(...latencies)).toBeLessThan(DEPENDENCY_TIMEOUT_MS);
    expect(jobs).toHaveLength(answers.length);
    expect(used).toBe(answers.length);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(answers.length);
    expect(jobs.every((j) => j.status === 'done')).toBe(true);
    await db.close();
  }, 240_000);
});
