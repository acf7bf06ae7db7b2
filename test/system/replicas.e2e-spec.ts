import { ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { MIGRATIONS } from '../../src/database/migrations/index';
import { ADMIN_DATABASE_URL } from '../support/global-setup';
import { SECRET_IN_LOG } from '../support/log-scan';
import { buildDist } from '../support/outage';
import { startTestApp, workerQueuePrefix } from '../support/test-app';

/** A free loopback port (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** One API process (`dist/main.js`, as `npm start` runs it) and its JSON log lines. */
interface ApiProcess {
  child: ChildProcess;
  port: number;
  lines: any[];
  exited: Promise<number | null>;
}

function startApi(env: Record<string, string>, port: number): ApiProcess {
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: join(__dirname, '../..'),
    env: { ...process.env, ...env, PORT: String(port), LOG_FORMAT: 'json', LOG_LEVEL: 'log' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: any[] = [];
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    for (const line of parts.filter(Boolean)) {
      try {
        lines.push(JSON.parse(line));
      } catch {
        lines.push({ msg: line });
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => lines.push({ level: 'stderr', msg: chunk.toString('utf8') }));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port, lines, exited };
}

async function waitUntilListening(api: ApiProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!api.lines.some((l) => /API listening/.test(l.msg ?? ''))) {
    if (api.child.exitCode !== null) throw new Error(`API exited: ${JSON.stringify(api.lines.slice(-5))}`);
    if (Date.now() > deadline) throw new Error(`API not listening after ${timeoutMs} ms: ${JSON.stringify(api.lines.slice(-5))}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('API replicas', () => {
  const database = `${process.env.GLIMPSE_TEST_DATABASE}_replicas`;
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();
  const storageDir = mkdtempSync(join(tmpdir(), 'glimpse-replicas-'));
  const apis: ApiProcess[] = [];

  beforeAll(async () => {
    buildDist();
    const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    await admin.end();
  });
  afterAll(async () => {
    for (const api of apis) if (api.child.exitCode === null) api.child.kill('SIGKILL');
    await Promise.all(apis.map((a) => a.exited));
    const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
    rmSync(storageDir, { recursive: true, force: true });
  });

  it('two started at once against a fresh database both come up; the migrations are applied once', async () => {
    const env = {
      DATABASE_URL: databaseUrl,
      QUEUE_PREFIX: workerQueuePrefix('replicas'),
      STORAGE_DIR: storageDir,
      WORKER_MODE: 'off',
      SSRF_ALLOW_PRIVATE: 'true',
      SHUTDOWN_DELAY_MS: '3000',
    };
    const [portA, portB] = [await freePort(), await freePort()];
    apis.push(startApi(env, portA), startApi(env, portB));
    await Promise.all(apis.map((api) => waitUntilListening(api, 150_000)));

    const applied = apis.map((api) => api.lines.filter((l) => /^Applied migrations/.test(l.msg ?? '')).length);
    const upToDate = apis.map((api) => api.lines.filter((l) => l.msg === 'Database schema is up to date').length);
    expect(applied.sort()).toEqual([0, 1]);
    expect(upToDate.sort()).toEqual([0, 1]);
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    const { rows } = await db.query('SELECT name, count(*)::int AS n FROM migrations GROUP BY name');
    await db.end();
    expect(rows).toHaveLength(MIGRATIONS.length);
    expect(rows.every((r) => r.n === 1)).toBe(true);
    for (const api of apis) {
      expect((await fetch(`http://127.0.0.1:${api.port}/ready`)).status).toBe(200);
    }
  }, 240_000);

  it('on SIGTERM /ready turns 503 at once while a request in flight still completes; then the process exits 0', async () => {
    const [api] = apis;
    // A key in the replicas' database, made through the services.
    const admin = await startTestApp({ env: { DATABASE_URL: databaseUrl }, runProcessors: false });
    const { key } = await admin.createKey();
    await admin.close();

    const body = JSON.stringify({ url: 'http://127.0.0.1:9/' });
    const inFlight = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: api.port,
          method: 'POST',
          path: '/v1/screenshot',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      // The rest once the drain has begun.
      setTimeout(() => req.end(body.slice(10)), 1500);
    });
    await new Promise((r) => setTimeout(r, 300));
    api.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const ready = await fetch(`http://127.0.0.1:${api.port}/ready`);
    expect(ready.status).toBe(503);
    expect(Object.keys((await ready.json()).error)).toEqual(['shutdown']);
    expect(await inFlight).toBe(202);
    expect(await api.exited).toBe(0);
    // Its log lines hold no secret (the key was used in an Authorization header above).
    expect(api.lines.filter((l) => SECRET_IN_LOG.test(JSON.stringify(l)))).toEqual([]);
    expect(api.lines.some((l) => l.msg === 'request' && l.route === '/v1/screenshot' && l.status === 202)).toBe(true);
    // The other replica is unaffected.
    expect((await fetch(`http://127.0.0.1:${apis[1].port}/ready`)).status).toBe(200);
  }, 60_000);
});
