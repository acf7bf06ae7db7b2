import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupCpuLimit, ConfigError, defaultCaptureConcurrency, loadConfig, usableCores } from './app-config';

const base = {};

describe('loadConfig', () => {
  it('applies the defaults of CONTRACT.md', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      port: 3000,
      publicBaseUrl: 'http://localhost:3000',
      ssrfAllowPrivate: false,
      webhookAllowHttp: false,
      webhookRetryDelaysS: [60, 300, 1800, 7200, 43200],
      webhookTimeoutMs: 15000,
      resultTtlDays: 30,
      legacyFreeCap: 1000,
      workerMode: 'inline',
      captureTimeoutMs: 30000,
      captureConcurrency: defaultCaptureConcurrency(),
    });
  });

  it('sizes CAPTURE_CONCURRENCY from the usable cores: twice as many, at most 32 (docs/performance.md)', () => {
    expect([1, 2, 4, 16, 64].map((cores) => defaultCaptureConcurrency(cores))).toEqual([2, 4, 8, 32, 32]);
    expect(usableCores()).toBeGreaterThanOrEqual(1);
    expect(loadConfig({ ...base, CAPTURE_CONCURRENCY: '3' }).captureConcurrency).toBe(3);
  });

  it('reads a cgroup v2 CPU limit as whole cores, at least 1, and none for max', () => {
    expect(cgroupCpuLimit('200000 100000\n')).toBe(2);
    expect(cgroupCpuLimit('150000 100000')).toBe(1);
    expect(cgroupCpuLimit('50000 100000')).toBe(1);
    expect(cgroupCpuLimit('max 100000')).toBeNull();
    expect(cgroupCpuLimit('')).toBeNull();
  });

  it('parses typed values and strips a trailing slash of PUBLIC_BASE_URL', () => {
    const config = loadConfig({
      ...base,
      PORT: '8080',
      SSRF_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_DELAYS: '0.2, 1,2',
      PUBLIC_BASE_URL: 'https://shots.example.com/',
    });
    expect(config).toMatchObject({
      port: 8080,
      ssrfAllowPrivate: true,
      webhookRetryDelaysS: [0.2, 1, 2],
      publicBaseUrl: 'https://shots.example.com',
    });
  });

  it('reports every invalid variable at once, one line each', () => {
    let error: unknown;
    try {
      loadConfig({
        ...base,
        PORT: 'eighty',
        WORKER_MODE: 'sometimes',
        DATABASE_URL: 'mysql://x',
        SSRF_ALLOW_PRIVATE: 'maybe',
        WEBHOOK_RETRY_DELAYS: '1,,2',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(5);
    for (const name of ['PORT', 'WORKER_MODE', 'DATABASE_URL', 'SSRF_ALLOW_PRIVATE', 'WEBHOOK_RETRY_DELAYS']) {
      expect(problems.filter((p) => p.startsWith(`${name}=`))).toHaveLength(1);
    }
    expect(problems.every((p) => !p.includes('\n'))).toBe(true);
  });

  it('TRUST_PROXY: off by default; a hop count or proxy addresses/subnets; refuses "true" and malformed addresses', () => {
    expect(loadConfig(base).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8 ,fd00::/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8']);
    for (const bad of ['true', '0', '10.0.0.0/99', 'proxy.internal']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(/TRUST_PROXY/);
    }
  });

  it('needs no browser: CHROMIUM_PATH is passed on as set, and checked by the browser pool when it launches', () => {
    expect(loadConfig({}).chromiumPath).toBeNull();
    expect(loadConfig({ CHROMIUM_PATH: '/nowhere/chromium' }).chromiumPath).toBe('/nowhere/chromium');
  });

  describe('webhook secret keys', () => {
    const hex = (b: number) => b.toString(16).padStart(2, '0').repeat(32);
    const base64 = Buffer.alloc(32, 7).toString('base64');

    it('NODE_ENV=production refuses to start without a key, naming WEBHOOK_SECRET_KEY', () => {
      expect(() => loadConfig({ ...base, NODE_ENV: 'production' })).toThrow(ConfigError);
      try {
        loadConfig({ ...base, NODE_ENV: 'production' });
      } catch (err) {
        expect((err as ConfigError).problems).toEqual([expect.stringMatching(/^WEBHOOK_SECRET_KEY: required with NODE_ENV=production/)]);
      }
      expect(loadConfig({ ...base, NODE_ENV: 'production', WEBHOOK_SECRET_KEY: hex(1) })).toMatchObject({ production: true });
      expect(loadConfig({ ...base, NODE_ENV: 'production', WEBHOOK_SECRET_KEYS: hex(1) }).webhookSecretKeys).toHaveLength(1);
      // Outside production an unset key is allowed (a warning is logged at start-up).
      expect(loadConfig({ ...base, NODE_ENV: 'development' })).toMatchObject({ production: false, webhookSecretKeys: [] });
      expect(loadConfig(base).webhookSecretKeys).toEqual([]);
    });

    it('WEBHOOK_SECRET_KEYS is a comma-separated list, newest first, hex or base64', () => {
      const config = loadConfig({ ...base, WEBHOOK_SECRET_KEYS: ` ${hex(2)} , ${base64}` });
      expect(config.webhookSecretKeys).toEqual([Buffer.alloc(32, 2), Buffer.alloc(32, 7)]);
      expect(loadConfig({ ...base, WEBHOOK_SECRET_KEY: hex(3) }).webhookSecretKeys).toEqual([Buffer.alloc(32, 3)]);
    });

    it('reports a malformed or repeated key and both variables at once, without echoing key material', () => {
      const problemsOf = (env: Record<string, string>) => {
        try {
          loadConfig({ ...base, ...env });
        } catch (err) {
          return (err as ConfigError).problems;
        }
        return [];
      };
      expect(problemsOf({ WEBHOOK_SECRET_KEYS: `${hex(1)},abc` })).toEqual([
        expect.stringMatching(/^WEBHOOK_SECRET_KEYS: key 2 must be 32 bytes/),
      ]);
      expect(problemsOf({ WEBHOOK_SECRET_KEYS: `${hex(1)},${hex(1)}` })).toEqual([expect.stringMatching(/key 2 is listed twice/)]);
      expect(problemsOf({ WEBHOOK_SECRET_KEYS: hex(1), WEBHOOK_SECRET_KEY: hex(2) })).toEqual([expect.stringMatching(/set only one/)]);
      const malformed = problemsOf({ WEBHOOK_SECRET_KEY: 'deadbeef-not-a-key', NODE_ENV: 'production' });
      expect(malformed).toHaveLength(1);
      expect(malformed[0]).toMatch(/^WEBHOOK_SECRET_KEY: must be 32 bytes/);
      expect(malformed.join()).not.toContain('deadbeef');
    });
  });

  describe('operations settings (docs/configuration.md)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'glimpse-config-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reads <NAME>_FILE secrets without their trailing newline', () => {
      const key = 'ab'.repeat(32);
      writeFileSync(join(dir, 'key'), `${key}\n`);
      writeFileSync(join(dir, 'db'), 'postgres://glimpse:s3cret@db:5432/glimpse\n');
      writeFileSync(join(dir, 'metrics'), 'metrics-token-0123456789');
      const config = loadConfig({
        ...base,
        WEBHOOK_SECRET_KEY_FILE: join(dir, 'key'),
        DATABASE_URL_FILE: join(dir, 'db'),
        METRICS_TOKEN_FILE: join(dir, 'metrics'),
      });
      expect(config.webhookSecretKeys[0].toString('hex')).toBe(key);
      expect(config.databaseUrl).toBe('postgres://glimpse:s3cret@db:5432/glimpse');
      expect(config.metricsToken).toBe('metrics-token-0123456789');
    });

    it('refuses both forms at once and unreadable files, naming the variable, never echoing secrets', () => {
      writeFileSync(join(dir, 'token'), 'admin-token-0123456789');
      let error: unknown;
      try {
        loadConfig({
          ...base,
          ADMIN_TOKEN: 'admin-token-abcdefghijk',
          ADMIN_TOKEN_FILE: join(dir, 'token'),
          S3_SECRET_ACCESS_KEY_FILE: join(dir, 'missing'),
          METRICS_TOKEN: 'short',
          DATABASE_URL: 'mysql://user:hunter22@db/x',
        });
      } catch (err) {
        error = err;
      }
      const problems = (error as ConfigError).problems;
      expect(problems).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^ADMIN_TOKEN_FILE: set either/),
          expect.stringMatching(/^S3_SECRET_ACCESS_KEY_FILE=.*cannot read \(ENOENT\)/),
          expect.stringMatching(/^METRICS_TOKEN: must be at least 16 characters/),
          expect.stringMatching(/^DATABASE_URL="mysql:\/\/user:\*\*\*@db\/x"/),
        ]),
      );
      expect(problems.join('\n')).not.toMatch(/admin-token|short|hunter22/);
    });

    it('requires a bucket for S3 storage and both S3 keys or neither', () => {
      expect(() => loadConfig({ ...base, STORAGE_DRIVER: 's3' })).toThrow(/S3_BUCKET: required/);
      expect(() => loadConfig({ ...base, STORAGE_DRIVER: 's3', S3_BUCKET: 'results', S3_ACCESS_KEY_ID: 'id' })).toThrow(
        /set both or neither/,
      );
      expect(loadConfig({ ...base, STORAGE_DRIVER: 's3', S3_BUCKET: 'results', S3_FORCE_PATH_STYLE: 'true' }).s3).toEqual({
        bucket: 'results',
        endpoint: undefined,
        region: 'us-east-1',
        accessKeyId: undefined,
        secretAccessKey: undefined,
        forcePathStyle: true,
      });
      expect(loadConfig(base).s3).toBeNull();
    });

    it('logs JSON unless stdout is a terminal, and LOG_FORMAT decides when set', () => {
      expect(loadConfig(base, false).logFormat).toBe('json');
      expect(loadConfig(base, true).logFormat).toBe('pretty');
      expect(loadConfig({ ...base, LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
      expect(() => loadConfig({ ...base, LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
      expect(loadConfig(base)).toMatchObject({
        workerHealthPort: 3001,
        migrateOnStart: true,
        shutdownDelayMs: 0,
        metricsToken: null,
        adminToken: null,
      });
    });
  });
});
