import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { buildDist, insertKey, PostgresCluster, RedisServer, ServiceProcess, waitFor } from './outage';
import { PageServer, startPageServer } from './page-server';

/**
 * The outage scenarios' shared harness (docs/durability.md): each scenario file reproduces one outage
 * against real processes (`dist/main.js`, `dist/worker.js`), a PostgreSQL cluster and a redis-server of
 * its own on loopback ports, so the scenarios run in parallel. Each ends with every accepted job `done`
 * or `failed`, the quota counter equal to the jobs accepted, and no job twice.
 */

export const DEPENDENCY_TIMEOUT_MS = 5000;

export interface Answer {
  status: number;
  body: any;
  ms: number;
  retryAfter: string | null;
}

export async function post(baseUrl: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
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
export class Db {
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
    const rows = (await this.client.query(`SELECT COALESCE(SUM(used), 0)::int AS used FROM quota_usage WHERE api_key_id = $1`, [keyId]))
      .rows;
    return rows[0].used;
  }
  /**
   * Waits until every job of the key ended; returns the time it took, ms. On timeout the error names
   * the jobs still open (status, attempts, times) and ends with `logs()`: the processes' recent output.
   */
  async allEnded(keyId: string, timeoutMs: number, logs: () => string = () => ''): Promise<number> {
    const started = Date.now();
    try {
      await waitFor(
        'every accepted job to end',
        async () => (await this.jobs(keyId)).every((j) => j.status === 'done' || j.status === 'failed'),
        timeoutMs,
        500,
      );
    } catch (err) {
      const open = await this.client
        .query(
          `SELECT id, status, attempts, created_at, started_at FROM screenshot_jobs
            WHERE api_key_id = $1 AND status NOT IN ('done', 'failed') ORDER BY created_at`,
          [keyId],
        )
        .then((r) => JSON.stringify(r.rows, null, 1))
        .catch((e) => `(could not read the open jobs: ${(e as Error).message})`);
      throw new Error(`${(err as Error).message}\nopen jobs: ${open}\n${logs()}`);
    }
    return Date.now() - started;
  }
  /**
   * Runs out the Idempotency-Key leases still held for the key's requests (those of a killed process), as
   * their 60 s would (CONTRACT.md, "Idempotency"; the lease's length is checked with a fake clock in
   * test/api/idempotency.e2e-spec.ts). Returns how many it ended.
   */
  async runOutLeases(keyId: string): Promise<number> {
    const result = await this.client.query(
      `UPDATE idempotency_keys SET expires_at = now() WHERE api_key_id = $1 AND response_status IS NULL`,
      [keyId],
    );
    return result.rowCount ?? 0;
  }
  close(): Promise<void> {
    return this.client.end();
  }
}

export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0;
};

/** What each outage scenario file shares: its own PostgreSQL cluster, redis-server and page server, and its processes. */
export interface OutageHarness {
  readonly pg: PostgresCluster;
  readonly redis: RedisServer;
  /** How many scenarios this file has set up (names its databases and keys). */
  readonly scenario: number;
  /** A database and queue prefix of the scenario's own, an environment for its processes, and an API key. */
  setUp(): Promise<{ env: Record<string, string>; db: Db; key: string; keyId: string }>;
  /** Starts `dist/<entry>.js`; every process is killed after the file. */
  start(entry: 'main' | 'worker', env: Record<string, string>): Promise<ServiceProcess>;
  /** The body of a capture of the file's test page. */
  page(): { url: string };
  /** The last `chars` characters of each process's output, labelled (for a failure's message). */
  logs(chars?: number): string;
}

/**
 * Registers the file's `beforeAll`/`afterAll`: builds `dist/` when stale, starts a PostgreSQL cluster,
 * a redis-server and a page server of the file's own on loopback ports, and stops them all after.
 */
export function useOutageHarness(): OutageHarness {
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

  return {
    get pg() {
      return pg;
    },
    get redis() {
      return redis;
    },
    get scenario() {
      return scenario;
    },
    async setUp() {
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
      const { key, keyId } = await insertKey(databaseUrl);
      return { env, db: await Db.open(databaseUrl), key, keyId };
    },
    async start(entry, env) {
      const service = await ServiceProcess.start(entry, env);
      processes.push(service);
      return service;
    },
    page: () => ({ url: `${pages.url}/page` }),
    logs: (chars = 6000) => processes.map((p, i) => `--- process ${i + 1} (${p.entry}), last output:\n${p.log().slice(-chars)}`).join('\n'),
  };
}
