import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { displayPrefix, hashApiKeySecret, newApiKeySecret } from '../../src/auth/api-key-secret';
import { newId } from '../../src/common/ids';

/**
 * Real processes for the outage tests: a PostgreSQL cluster and a `redis-server` of the test's own on
 * loopback ports (never the machine's shared services), and the service's own entry points
 * (`dist/main.js`, `dist/worker.js`) as child processes that can be SIGKILLed.
 */

const ROOT = resolve(__dirname, '../..');

/** A free TCP port on 127.0.0.1 (bound and released). */
export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it returns a truthy value, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs: number,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Debian's PostgreSQL server binaries (`initdb`, `pg_ctl`), newest version first. */
function postgresBinDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (!versions.length) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (Debian package postgresql)');
  return join(base, versions[0], 'bin');
}

/** A PostgreSQL cluster of the test's own on 127.0.0.1:`port`, trust authentication, user `postgres`. */
export class PostgresCluster {
  readonly url: string;
  private readonly bin = postgresBinDir();

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {
    this.url = `postgres://postgres@127.0.0.1:${port}`;
  }

  /** initdb into a fresh directory and start the server. As root, the server runs as the `postgres` user. */
  static async start(): Promise<PostgresCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'glimpse-outage-pg-'));
    chmodSync(dir, 0o777);
    const cluster = new PostgresCluster(dir, await freePort());
    cluster.run('initdb', ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    writeFileSync(join(dir, 'postgresql.auto.conf'), '');
    await cluster.startServer();
    return cluster;
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** Starts the server (after {@link stop}) and waits until it accepts connections. */
  async startServer(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
    this.run('pg_ctl', ['-D', this.dataDir, '-o', options, '-l', join(this.dir, 'server.log'), '-w', '-t', '30', 'start']);
    await waitFor(
      'PostgreSQL to accept connections',
      async () => {
        const client = new Client({ connectionString: `${this.url}/postgres` });
        await client.connect();
        await client.end();
        return true;
      },
      30_000,
    );
  }

  /** Stops the server (`fast`: open sessions are ended, as an operator's restart does). */
  stop(): void {
    this.run('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
  }

  /** Creates a database with every migration applied (by the built `dist/database/run-migrations.js`); returns its URL. */
  async createDatabase(name: string): Promise<string> {
    const admin = new Client({ connectionString: `${this.url}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const url = `${this.url}/${name}`;
    execFileSync(process.execPath, [join(ROOT, 'dist/database/run-migrations.js')], {
      env: { ...process.env, DATABASE_URL: url },
      stdio: 'pipe',
    });
    return url;
  }

  /** Stops the server if running and deletes the cluster's directory. */
  destroy(): void {
    try {
      this.stop();
    } catch {
      /* already stopped */
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private run(tool: string, args: string[]): void {
    const path = join(this.bin, tool);
    // initdb and postgres refuse to run as root.
    const [command, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres', this.dir]);
    execFileSync(command, argv, { stdio: 'pipe', cwd: this.dir });
  }
}

/** A `redis-server` of the test's own on 127.0.0.1:`port`, without persistence (a restart starts empty). */
export class RedisServer {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.startServer();
    return server;
  }

  /** Starts the server (again, empty, after {@link kill}) and waits until it answers. */
  async startServer(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    this.child = child;
    await waitFor(
      'redis-server to answer',
      async () => {
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { stdio: 'pipe' });
        return true;
      },
      10_000,
      100,
    );
  }

  /** SIGKILLs the server: everything in it is lost. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  /** Runs a `redis-cli` command; returns its output. */
  cli(...args: string[]): string {
    return execFileSync('redis-cli', ['-p', String(this.port), ...args], { encoding: 'utf8' });
  }
}

/** A running `dist/main.js` or `dist/worker.js`. */
export class ServiceProcess {
  private output = '';

  private constructor(
    readonly child: ChildProcess,
    readonly baseUrl: string | null,
    readonly entry: 'main' | 'worker',
  ) {
    child.stdout?.on('data', (d) => (this.output = (this.output + d).slice(-200_000)));
    child.stderr?.on('data', (d) => (this.output = (this.output + d).slice(-200_000)));
  }

  /**
   * Starts the API (`main`, listening on a free port; resolves once it answers HTTP) or a worker
   * (`worker`; resolves once it logged its start) with `env` over the test's environment. A port taken
   * by another process between {@link freePort} and the child's `listen` (EADDRINUSE) is retried on new
   * ports, twice; a child that exits otherwise fails at once with its output.
   */
  static async start(entry: 'main' | 'worker', env: Record<string, string>): Promise<ServiceProcess> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ServiceProcess.startOnce(entry, env);
      } catch (err) {
        if (attempt < 3 && /EADDRINUSE/.test((err as Error).message)) continue;
        throw err;
      }
    }
  }

  private static async startOnce(entry: 'main' | 'worker', env: Record<string, string>): Promise<ServiceProcess> {
    const port = await freePort();
    const healthPort = await freePort();
    const child = spawn(process.execPath, [join(ROOT, `dist/${entry}.js`)], {
      env: { ...process.env, LOG_LEVEL: 'log', ...env, PORT: String(port), WORKER_HEALTH_PORT: String(healthPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child, entry === 'main' ? `http://127.0.0.1:${port}` : null, entry);
    let exited: (code: number | null) => void = () => undefined;
    const exit = new Promise<never>((_, reject) => {
      exited = (code) => reject(new Error(`${entry}.js exited with ${code}`));
    });
    child.once('exit', (code) => exited(code));
    const started = waitFor(
      `${entry}.js to start`,
      async () => {
        if (entry === 'worker') return /Worker started/.test(service.output);
        const res = await fetch(`${service.baseUrl}/v1/screenshot/none`);
        return res.status === 401;
      },
      60_000,
      200,
    );
    try {
      await Promise.race([started, exit]);
    } catch (err) {
      child.kill('SIGKILL');
      started.catch(() => undefined);
      throw new Error(`${(err as Error).message}\n${service.output}`);
    }
    exit.catch(() => undefined);
    return service;
  }

  /** The process's recent stdout and stderr. */
  log(): string {
    return this.output;
  }

  /** SIGKILLs the process and waits for its exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill(signal);
    await exited;
  }
}

/**
 * Builds `dist/` from the current sources (the outage tests run the real entry points), unless it is
 * newer than every file under `src/` (as after `npm test`'s `openapi:check`, which builds it). Emits
 * without type checking (`npm run build:js`): `npm run typecheck` checks the types.
 */
export function buildDist(): void {
  const built = existsSync(join(ROOT, 'dist/main.js')) ? statSync(join(ROOT, 'dist/main.js')).mtimeMs : 0;
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
      ),
    );
  if (built > newest(join(ROOT, 'src'))) return;
  execFileSync('npm', ['run', 'build:js'], { cwd: ROOT, stdio: 'pipe' });
}

/**
 * Creates an account on `plan` with one API key through the built CLI (`account:create`, `key:create`);
 * returns the key's secret and id. Each command is a process that boots the app (about 2 s of CPU):
 * scenarios that only need a key use {@link insertKey}.
 */
export function createKey(databaseUrl: string, redisUrl: string, plan = 'pro'): { key: string; keyId: string } {
  const env = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: redisUrl };
  const email = `outage-${Math.random().toString(36).slice(2)}@test.local`;
  const cli = (args: string[]) =>
    JSON.parse(execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args, '--json'], { env, encoding: 'utf8' }));
  cli(['account:create', '--email', email, '--plan', plan]);
  const created = cli(['key:create', '--account', email]);
  return { key: created.key, keyId: created.id };
}

/**
 * Inserts an account on `plan` and one API key into the database at `databaseUrl`, the rows the CLI's
 * `account:create` and `key:create` write (the secret made and hashed by src/auth/api-key-secret.ts);
 * returns the key's secret and id.
 */
export async function insertKey(databaseUrl: string, plan = 'pro'): Promise<{ key: string; keyId: string }> {
  const key = newApiKeySecret();
  const accountId = newId('account');
  const keyId = newId('apiKey');
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`INSERT INTO accounts (id, email, plan) VALUES ($1, $2, $3)`, [accountId, `${accountId}@test.local`, plan]);
    await client.query(`INSERT INTO api_keys (id, account_id, prefix, secret_hash) VALUES ($1, $2, $3, $4)`, [
      keyId,
      accountId,
      displayPrefix(key),
      hashApiKeySecret(key),
    ]);
  } finally {
    await client.end();
  }
  return { key, keyId };
}
