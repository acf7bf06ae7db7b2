import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/app-config';

/*
 * scripts/ensure-local-services.sh, run by `npm run setup` and before `npm test` (docs/development.md,
 * "A fresh machine"): where DATABASE_URL and REDIS_URL point at this machine and nothing answers, it
 * installs and starts PostgreSQL and Redis. Its decisions are checked with the commands that would change
 * the machine stubbed (GLIMPSE_SETUP_STUB_INSTALL); a loopback TCP listener of the test stands in for a
 * server that answers, a port nobody listens on for one that does not.
 */

const SCRIPT = join(__dirname, '../../scripts/ensure-local-services.sh');

/** Runs the script with `env` (bounded: 20 s), as the current user or, with `user`, as that user. */
function runScript(env: Record<string, string>, user?: string): { status: number | null; stderr: string } {
  const vars = { PATH: process.env.PATH ?? '', ...env };
  const [command, args] = user
    ? ['runuser', ['-u', user, '--', 'env', ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), 'bash', SCRIPT]]
    : ['bash', [SCRIPT]];
  const run = spawnSync(command, args, { env: user ? process.env : vars, encoding: 'utf8', timeout: 20_000 });
  return { status: run.status, stderr: run.stderr };
}

/** A loopback listener: something that answers at 127.0.0.1:port. */
async function listener(): Promise<Server & { port: number }> {
  const server = createServer((socket) => socket.destroy());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return Object.assign(server, { port: (server.address() as { port: number }).port });
}

describe('scripts/ensure-local-services.sh', () => {
  let postgres: Server & { port: number };
  let redis: Server & { port: number };
  /** Ports nobody listens on: two listeners', closed. */
  let freePostgres: number;
  let freeRedis: number;

  beforeAll(async () => {
    [postgres, redis] = await Promise.all([listener(), listener()]);
    const closed = await Promise.all([listener(), listener()]);
    [freePostgres, freeRedis] = closed.map((s) => s.port);
    await Promise.all(closed.map((s) => new Promise((resolve) => s.close(resolve))));
  });
  afterAll(() => {
    postgres.close();
    redis.close();
  });

  it('knows the service defaults of DATABASE_URL and REDIS_URL (src/config/app-config.ts)', () => {
    // The script's fallbacks must be where the service looks without configuration.
    const source = readFileSync(SCRIPT, 'utf8');
    const config = loadConfig({});
    expect(source).toContain(`"${config.databaseUrl}"`);
    expect(source).toContain(`"${config.redisUrl}"`);
  });

  it('is quiet and changes nothing when both answer', () => {
    const { status, stderr } = runScript({
      GLIMPSE_SETUP_STUB_INSTALL: 'absent',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${postgres.port}/glimpse`,
      REDIS_URL: `redis://localhost:${redis.port}`,
    });
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });

  it('installs (apt-get update first) and starts both, saying so, when nothing answers at their local addresses', () => {
    const { status, stderr } = runScript({
      GLIMPSE_SETUP_STUB_INSTALL: 'absent',
      DATABASE_URL: `postgres://glimpse:secret@127.0.0.1:${freePostgres}/glimpse`,
      REDIS_URL: `redis://localhost:${freeRedis}`,
    });
    expect(status).toBe(0);
    const commands = stderr.split('\n').filter((line) => line.startsWith('would run: '));
    expect(commands[0]).toBe('would run: apt-get update -q');
    expect(commands).toContain('would run: apt-get install -y -q --no-install-recommends postgresql');
    expect(commands).toContain('would run: apt-get install -y -q --no-install-recommends redis-server');
    // Trust auth on loopback, then the cluster on the URL's port started, and the URL's role.
    expect(commands).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^would run: sed -i 1i host all all 127\.0\.0\.1\/32 trust \/etc\/postgresql\/.+\/pg_hba\.conf$/),
        expect.stringMatching(/^would run: sed -i 1i host all all ::1\/128 trust /),
        expect.stringMatching(/^would run: pg_ctlcluster \S+ \S+ (start|reload)$/),
        'would run: CREATE ROLE "glimpse" LOGIN CREATEDB (when missing)',
        `would run: redis-server --daemonize yes --port ${freeRedis} --bind 127.0.0.1 -::1 --dir /var/lib/redis`,
      ]),
    );
    expect(commands.filter((c) => c.startsWith('would run: apt-get update'))).toHaveLength(1);
    expect(stderr).toContain(`PostgreSQL: nothing answers at 127.0.0.1:${freePostgres} (DATABASE_URL).`);
    expect(stderr).toContain(`Redis: nothing answers at localhost:${freeRedis} (REDIS_URL).`);
    expect(stderr).toMatch(/PostgreSQL: cluster .+ runs on port \d+, trust auth for 127\.0\.0\.1 and ::1\./);
  });

  it('starts an installed server without installing it, and only the one that does not answer', () => {
    const { status, stderr } = runScript({
      GLIMPSE_SETUP_STUB_INSTALL: '1',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${postgres.port}/glimpse`,
      REDIS_URL: `redis://[::1]:${freeRedis}`,
    });
    expect(status).toBe(0);
    expect(stderr).not.toContain('PostgreSQL');
    expect(stderr).toContain(`would run: redis-server --daemonize yes --port ${freeRedis} --bind 127.0.0.1 -::1`);
    // Debian's redis-server is on this machine (the tests start their own): nothing to install.
    expect(stderr).not.toContain('apt-get');
  });

  it('never touches a remote address, even when nothing answers there', () => {
    const { status, stderr } = runScript({
      GLIMPSE_SETUP_STUB_INSTALL: 'absent',
      DATABASE_URL: 'postgres://glimpse@db.example.invalid:5432/glimpse',
      REDIS_URL: 'redis://10.255.255.1:6379',
    });
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });

  it('says what to install, and fails, when it may not install', () => {
    const env = { DATABASE_URL: `postgres://postgres@127.0.0.1:${freePostgres}/glimpse`, REDIS_URL: `redis://127.0.0.1:${freeRedis}` };
    // Not root: as root, run it as `nobody`; without a stub, so a wrong decision would change the machine.
    const { status, stderr } = process.getuid?.() === 0 ? runScript(env, 'nobody') : runScript(env);
    expect(status).toBe(1);
    expect(stderr).toContain('e.g. sudo apt-get install postgresql');
    expect(stderr).toContain('e.g. sudo apt-get install redis-server');
    expect(stderr).not.toContain('would run');
  });
});
