import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, getMetadataStorage, Min, validateSync } from 'class-validator';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import proxyAddr from 'proxy-addr';
import { resolve } from 'node:path';
import { parseEgressProxies, UpstreamProxy } from './egress-proxies';

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value);
const toBool = ({ value }: { value: unknown }) => {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0' || value === '') return false;
  return value;
};

/** One webhook secret key: 32 bytes as 64 hex characters or 44 base64 characters. */
const SECRET_KEY_PATTERN = /^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/;

/** Where `FFMPEG_PATH` is looked for when unset; otherwise `ffmpeg` is looked up on `PATH` when a run starts. */
export const FFMPEG_CANDIDATES = ['/usr/bin/ffmpeg', '/usr/local/bin/ffmpeg'];

/**
 * The whole cores a cgroup v2 CPU limit allows: `cpu.max` holds `<quota> <period>` (µs of CPU per
 * period) or `max <period>` (no limit: null); the quota divided by the period, rounded down, at least 1.
 * Null for text that is not a limit.
 */
export function cgroupCpuLimit(cpuMax: string): number | null {
  const [quota, period] = cpuMax.trim().split(/\s+/).map(Number);
  if (!(quota > 0) || !(period > 0)) return null;
  return Math.max(1, Math.floor(quota / period));
}

/**
 * The cores this process may use: Node's `os.availableParallelism()` (the CPU affinity mask; from
 * libuv 1.49, as in Node 24 of the image, also a container's CPU quota), and no more than the
 * cgroup v2 CPU limit of this process's cgroup ({@link cgroupCpuLimit}), read here for the Node
 * versions whose libuv does not.
 */
export function usableCores(): number {
  const cores = availableParallelism();
  try {
    const path = /^0::(\/.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
    const limit = cgroupCpuLimit(readFileSync(resolve('/sys/fs/cgroup', `.${path}`, 'cpu.max'), 'utf8'));
    return limit === null ? cores : Math.min(cores, limit);
  } catch {
    return cores;
  }
}

/**
 * The default `CAPTURE_CONCURRENCY`: twice the cores this process may use ({@link usableCores}), at
 * most 32. More captures than cores keep the cores busy while pages wait on the network and the
 * compositor (measured in docs/performance.md, "How many at once").
 */
export function defaultCaptureConcurrency(cores: number = usableCores()): number {
  return Math.min(32, Math.max(1, 2 * cores));
}

/**
 * Raw environment as read from `process.env`, validated with class-validator.
 * Names and defaults follow CONTRACT.md, "Configuration (environment)".
 */
class EnvironmentVariables {
  @Transform(toInt) @IsInt() @Min(0) @Max(65535) PORT = 3000;
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/glimpse';
  @IsString()
  @Matches(/^rediss?:\/\//, { message: 'must be a redis:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';
  @IsString()
  @Matches(/^[A-Za-z0-9_:-]{1,64}$/, { message: 'must be 1-64 characters of [A-Za-z0-9_:-]' })
  QUEUE_PREFIX = 'glimpse';
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  PUBLIC_BASE_URL?: string;
  @IsString() STORAGE_DIR = './data/files';
  @IsOptional() @IsString() CHROMIUM_PATH?: string;
  /** `on` (default): Chromium's sandbox is required, a worker without it takes no work; `off`: Chromium runs without it. */
  @IsIn(['on', 'off']) CHROMIUM_SANDBOX: 'on' | 'off' = 'on';
  @Transform(toBool) @IsBoolean() SSRF_ALLOW_PRIVATE = false;
  /** JSON `{ "<id>": "http://user:pass@host:port" }`: the upstream proxies of the `proxy` option (src/config/egress-proxies.ts). */
  @IsOptional() @IsString() EGRESS_PROXIES?: string;
  @Transform(toBool) @IsBoolean() WEBHOOK_ALLOW_HTTP = false;
  @IsString()
  @Matches(/^\s*\d+(\.\d+)?(\s*,\s*\d+(\.\d+)?)*\s*$/, { message: 'must be a comma-separated list of seconds' })
  WEBHOOK_RETRY_DELAYS = '60,300,1800,7200,43200';
  @Transform(toInt) @IsInt() @Min(100) @Max(120000) WEBHOOK_TIMEOUT_MS = 15000;
  @Transform(toInt) @IsInt() @Min(1) @Max(31536000) WEBHOOK_DISABLE_AFTER_S = 432000;
  @IsOptional()
  @IsString()
  @Matches(SECRET_KEY_PATTERN, { message: 'must be 32 bytes as 64 hex characters or base64 (44 characters)' })
  WEBHOOK_SECRET_KEY?: string;
  /** Comma-separated keys, newest first: the first seals, every one opens (key rotation). */
  @IsOptional()
  @IsString()
  @Matches(/^\s*[^,\s]+(\s*,\s*[^,\s]+)*\s*$/, { message: 'must be a comma-separated list of keys' })
  WEBHOOK_SECRET_KEYS?: string;
  @Transform(toInt) @IsInt() @Min(0) @Max(100000) RATE_LIMIT_PER_SECOND = 0;
  @Transform(toInt) @IsInt() @Min(1) @Max(100000000) MAX_PENDING_JOBS_PER_ACCOUNT = 10000;
  /** `production` requires a webhook secret key; any other value (development, test) does not. */
  @IsOptional() @IsString() NODE_ENV?: string;
  @Transform(toInt) @IsInt() @Min(1) @Max(3650) RESULT_TTL_DAYS = 30;
  @Transform(toInt) @IsInt() @Min(0) LEGACY_FREE_CAP = 1000;
  @IsIn(['inline', 'off']) WORKER_MODE: 'inline' | 'off' = 'inline';
  @Transform(toInt) @IsInt() @Min(1000) @Max(120000) CAPTURE_TIMEOUT_MS = 30000;
  @Transform(toInt) @IsInt() @Min(0) @Max(120000) RENDER_WAIT_MS = 25000;
  /** Shortest time between two scheduled checks of one monitor, s (CONTRACT.md, "Monitors"). */
  @Transform(toInt) @IsInt() @Min(1) @Max(86400) MONITOR_MIN_INTERVAL_S = 300;
  /** Failed checks in a row after which a monitor pauses (`failing`). */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000) MONITOR_PAUSE_AFTER_FAILURES = 5;
  /** How often a worker looks for monitors whose check is due (a periodic job of the `monitors` queue: one worker per tick), ms. */
  @Transform(toInt) @IsInt() @Min(100) @Max(60000) MONITOR_TICK_MS = 2000;
  /** Monitor image comparisons run at once per process, each in a worker thread (CONTRACT.md, "Tenancy: fair share and isolation"). */
  @Transform(toInt) @IsInt() @Min(1) @Max(32) COMPARE_CONCURRENCY = 1;
  @Transform(toInt) @IsInt() @Min(1) @Max(32) CAPTURE_CONCURRENCY = defaultCaptureConcurrency();
  /** Capture jobs of one account running at once across all workers; 0: no cap beyond the turn order (CONTRACT.md, "Tenancy: fair share and isolation"). */
  @Transform(toInt) @IsInt() @Min(0) @Max(100000) ACCOUNT_MAX_RUNNING = 0;
  /** Device pixels one image may have (CONTRACT.md, "Capture options, second set": image size cap). */
  @Transform(toInt) @IsInt() @Min(10000) @Max(1000000000) MAX_IMAGE_PIXELS = 100000000;
  @Transform(toInt) @IsInt() @Min(0) @Max(32) CAPTURE_WARM_CONTEXTS = 2;
  @Transform(toInt) @IsInt() @Min(1) @Max(1000000) CAPTURE_BROWSER_RECYCLE_AFTER = 500;
  @IsOptional() @IsString() FFMPEG_PATH?: string;
  @Transform(toInt) @IsInt() @Min(0) @Max(32) RUN_CONCURRENCY = 1;
  @Transform(toBool) @IsBoolean() RUNS_ALLOW_EVALUATE = true;
  /** Comma-separated origins (`https://host[:port]`) whose browser requests may reach the MCP endpoint. */
  @IsString() MCP_ALLOWED_ORIGINS = '';
  /** Bound on waiting for PostgreSQL or Redis within a request (CONTRACT.md, "Rate limits and back-pressure"). */
  @Transform(toInt) @IsInt() @Min(100) @Max(60000) DEPENDENCY_TIMEOUT_MS = 5000;
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  DASHBOARD_URL?: string;
  @Transform(toBool) @IsBoolean() DASHBOARD_SIGNUP = false;
  @Transform(toInt) @IsInt() @Min(1) @Max(64) PASSWORD_HASH_CONCURRENCY = 2;
  /** Which proxies' `X-Forwarded-For` names the client: unset/`false`, a hop count, or addresses/subnets. */
  @IsOptional() @IsString() TRUST_PROXY?: string;
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  OIDC_ISSUER?: string;
  @IsOptional() @IsString() OIDC_CLIENT_ID?: string;
  @IsOptional() @IsString() OIDC_CLIENT_SECRET?: string;
  @IsIn(['error', 'warn', 'log', 'debug', 'verbose']) LOG_LEVEL: 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';
  @IsOptional() @IsIn(['json', 'pretty']) LOG_FORMAT?: 'json' | 'pretty';
  @IsOptional() @IsString() @Matches(/^\S{16,}$/, { message: 'must be at least 16 characters without spaces' }) METRICS_TOKEN?: string;
  @IsOptional() @IsString() @Matches(/^\S{16,}$/, { message: 'must be at least 16 characters without spaces' }) ADMIN_TOKEN?: string;
  @Transform(toInt) @IsInt() @Min(0) @Max(65535) WORKER_HEALTH_PORT = 3001;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(65535) METRICS_PORT?: number;
  @Transform(toBool) @IsBoolean() MIGRATE_ON_START = true;
  @Transform(toInt) @IsInt() @Min(0) @Max(120000) SHUTDOWN_DELAY_MS = 0;
  @IsIn(['local', 's3']) STORAGE_DRIVER: 'local' | 's3' = 'local';
  @IsOptional() @IsString() @Matches(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'must be an S3 bucket name' }) S3_BUCKET?: string;
  @IsOptional() @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] }) S3_ENDPOINT?: string;
  @IsString() S3_REGION = 'us-east-1';
  @IsOptional() @IsString() S3_ACCESS_KEY_ID?: string;
  @IsOptional() @IsString() S3_SECRET_ACCESS_KEY?: string;
  @Transform(toBool) @IsBoolean() S3_FORCE_PATH_STYLE = false;
}

/**
 * Variables that may instead be read from a file named by `<NAME>_FILE` (the Docker and Kubernetes
 * secrets convention); the file's content without its trailing newline is the value.
 */
export const FILE_SECRETS = [
  'DATABASE_URL',
  'WEBHOOK_SECRET_KEY',
  'WEBHOOK_SECRET_KEYS',
  'S3_SECRET_ACCESS_KEY',
  'EGRESS_PROXIES',
  'METRICS_TOKEN',
  'ADMIN_TOKEN',
] as const;

/**
 * Every environment variable the service reads (validated ones and the `<NAME>_FILE` forms), for
 * checks of deployment files (Dockerfile, compose, Helm chart) against the configuration.
 */
export function environmentVariableNames(): string[] {
  const names = getMetadataStorage()
    .getTargetValidationMetadatas(EnvironmentVariables, '', true, false)
    .map((m) => m.propertyName);
  return [...new Set([...names, ...FILE_SECRETS.map((n) => `${n}_FILE`)])].sort();
}

/** S3-compatible result storage (`STORAGE_DRIVER=s3`). */
export interface S3Config {
  bucket: string;
  /** e.g. `http://minio:9000`; unset for AWS S3 itself. */
  endpoint?: string;
  region: string;
  /** Unset: the SDK's default credential chain (instance role, `AWS_*` variables). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style URLs (`endpoint/bucket/key`), which MinIO and most S3-compatible servers need. */
  forcePathStyle: boolean;
}

/** Typed, validated configuration, read once at boot. Units are in the field names (ms, s, days). */
export interface AppConfig {
  port: number;
  databaseUrl: string;
  redisUrl: string;
  /** Bull key prefix; every queue of this deployment lives under it. */
  queuePrefix: string;
  /** Base of public result URLs, without a trailing slash (e.g. `http://localhost:3000`). */
  publicBaseUrl: string;
  /** Absolute path of the result file directory. */
  storageDir: string;
  /**
   * `CHROMIUM_PATH` as set, or null: the browser pool then picks the first browser it finds, the
   * headless shell first (src/browser/chromium-executable.ts). Not checked here, so processes that
   * launch no browser (`npm run openapi`, an API with `WORKER_MODE=off`, unit tests) need none.
   */
  chromiumPath: string | null;
  /**
   * `CHROMIUM_SANDBOX`: true (`on`, the default) requires Chromium's sandbox: a process whose
   * sandboxed launch fails, or where the sandbox cannot work (root, no user namespaces), takes no
   * captures or runs; false (`off`) launches Chromium without it (CONTRACT.md "Tenancy: fair share and
   * isolation", "The browser"; docs/security.md).
   */
  chromiumSandbox: boolean;
  ssrfAllowPrivate: boolean;
  webhookAllowHttp: boolean;
  /** Delays between webhook attempts, in seconds (attempt n+1 waits `webhookRetryDelaysS[n-1]`). */
  webhookRetryDelaysS: number[];
  webhookTimeoutMs: number;
  /**
   * An endpoint without a successful attempt for this many seconds, with an `exhausted` delivery in
   * that time, is disabled with reason `failing` (CONTRACT.md "Webhooks", default 432,000: 5 days).
   */
  webhookDisableAfterS: number;
  /**
   * AES-256-GCM keys (32 bytes each) for webhook signing secrets at rest, newest first: the first seals,
   * every one opens (rotation). From `WEBHOOK_SECRET_KEYS` (comma-separated) or `WEBHOOK_SECRET_KEY`
   * (one key), 64 hex characters or base64 each. Empty when neither is set: secrets are then stored
   * unencrypted and a warning is logged at start-up (docs/webhooks.md#configuration); refused in production.
   */
  webhookSecretKeys: Buffer[];
  /**
   * Requests per second per API key on `/v1/*` and the MCP endpoint, shared through Redis, bursts up to
   * twice that; 0: off (CONTRACT.md, "Rate limits and back-pressure").
   */
  rateLimitPerSecond: number;
  /** Capture jobs and runs not yet ended that one account may have; more is 429 `TOO_MANY_PENDING_JOBS`. */
  maxPendingJobsPerAccount: number;
  /** `NODE_ENV=production`: stricter start-up checks (a webhook secret key is required). */
  production: boolean;
  resultTtlDays: number;
  legacyFreeCap: number;
  workerMode: 'inline' | 'off';
  /** Navigation timeout of one capture, in ms. */
  captureTimeoutMs: number;
  /** How long a render link that missed the cache waits for its render before 503 `RENDER_PENDING`, ms (CONTRACT.md, "Render links"). */
  renderWaitMs: number;
  /**
   * Monitors (CONTRACT.md, "Monitors"): shortest schedule interval (s), failed checks in a row before
   * pausing, scheduler tick (ms), image comparisons at once per process (`COMPARE_CONCURRENCY`, each in
   * a worker thread; CONTRACT.md, "Tenancy: fair share and isolation").
   */
  monitors: { minIntervalS: number; pauseAfterFailures: number; tickMs: number; compareConcurrency: number };
  /** Captures run at once by one worker process. */
  captureConcurrency: number;
  /**
   * Capture jobs of one account `processing` at once across every worker (CONTRACT.md, "Tenancy: fair
   * share and isolation"; docs/durability.md, "Fair share"); 0: no cap beyond the turn order.
   */
  accountMaxRunning: number;
  /**
   * Device pixels (width × height × scale²) one image may have (CONTRACT.md, "Capture options, second
   * set": image size cap; default 100,000,000): larger sizes known at submission are a 400, larger
   * pages are cut or fail in the page (docs/capture-options.md, "Image size cap").
   */
  maxImagePixels: number;
  /**
   * The upstream proxies of the `proxy` capture option by id (`EGRESS_PROXIES`; CONTRACT.md, "Capture
   * options, second set"); empty when none. Their credentials never reach a log ({@link UpstreamProxy}).
   */
  egressProxies: Readonly<Record<string, UpstreamProxy>>;
  /**
   * Fresh browser contexts (each with a page) created ahead of demand, each still used by one
   * capture only; 0 creates them on demand (the naive baseline of the benchmark).
   */
  captureWarmContexts: number;
  /** Captures after which a browser is replaced by a new one, to bound its memory. */
  captureBrowserRecycleAfter: number;
  /** Path of the `ffmpeg` that encodes browser session run videos (Debian's package by default). */
  ffmpegPath: string;
  /** Browser session runs at once per worker process (0: this process runs none). */
  runConcurrency: number;
  /** Whether `evaluate` steps are accepted in runs (false: 400 `VALIDATION_FAILED`). */
  runsAllowEvaluate: boolean;
  logLevel: 'error' | 'warn' | 'log' | 'debug' | 'verbose';
  /**
   * How long a request may wait for PostgreSQL (a new connection) or Redis (queueing an accepted job),
   * ms. PostgreSQL not answering within it: 503 `SERVICE_UNAVAILABLE`; Redis: the job stays in
   * PostgreSQL and the reconciler queues it (CONTRACT.md, "Rate limits and back-pressure").
   */
  dependencyTimeoutMs: number;
  /**
   * Base of dashboard links (set-password, invites) from `DASHBOARD_URL`, without a trailing slash;
   * null means `{publicBaseUrl}/dashboard` (see {@link dashboardUrlOf}).
   */
  dashboardUrl: string | null;
  /** `DASHBOARD_SIGNUP=true`: anyone may create an account (plan `free`) at `/dashboard/signup`. */
  dashboardSignup: boolean;
  /** argon2 password hashes (and checks) run at once by this process (CONTRACT.md, "Dashboard"; default 2). */
  passwordHashConcurrency: number;
  /**
   * Express's `trust proxy` setting from `TRUST_PROXY` (https://expressjs.com/en/guide/behind-proxies.html):
   * false (the connection's address is the client's), a number of proxy hops in front of the app, or
   * the addresses/subnets (and `loopback`, `linklocal`, `uniquelocal`) of trusted proxies. Decides the
   * client IP the dashboard's sign-in limits count by.
   */
  trustProxy: false | number | string[];
  /**
   * OpenID Connect sign-in to the dashboard (`OIDC_ISSUER`, `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET`, all
   * three or none); users are matched by their verified email. Null when not configured.
   */
  oidc: { issuer: string; clientId: string; clientSecret: string } | null;
  /**
   * Origins (`scheme://host[:port]`, lower case, no trailing slash) allowed to call the MCP endpoint from
   * a browser; a request with any other `Origin` header is refused with 403. Empty: only requests
   * without `Origin` (non-browser clients) are served.
   */
  mcpAllowedOrigins: string[];
  /** `json`: one JSON object per line (default when stdout is not a terminal); `pretty`: coloured text. */
  logFormat: 'json' | 'pretty';
  /**
   * Bearer token required by `GET /metrics`; null: the endpoint is open, except on the API's public
   * port with `NODE_ENV=production`, where it is then 404 (CONTRACT.md, "Health and readiness").
   */
  metricsToken: string | null;
  /**
   * `METRICS_PORT`: a separate port on which the API also serves `/health`, `/ready` and `/metrics`
   * (for a scraper inside the network); null: none.
   */
  metricsPort: number | null;
  /** Bearer token of the queue dashboard at `/admin/queues`; null: the dashboard is off. */
  adminToken: string | null;
  /** Port of `/health`, `/ready` and `/metrics` of the worker process (`worker.ts`). */
  workerHealthPort: number;
  /** The API applies pending migrations at start, under a PostgreSQL advisory lock. */
  migrateOnStart: boolean;
  /**
   * After SIGTERM, how long the API keeps accepting requests while `/ready` answers 503 (so a load
   * balancer stops routing to it) before it closes its listener and drains, ms.
   */
  shutdownDelayMs: number;
  storageDriver: 'local' | 's3';
  /** Set when `storageDriver` is `s3`. */
  s3: S3Config | null;
}

/** Thrown by {@link loadConfig}; `problems` holds one readable line per invalid variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Injection token of the {@link AppConfig}. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/**
 * Validates an environment and returns the typed configuration.
 * Empty strings count as unset; `<NAME>_FILE` supplies a {@link FILE_SECRETS} variable from a file.
 * `stdoutIsTerminal` picks the default `LOG_FORMAT`. Throws {@link ConfigError} listing every problem at once.
 */
export function loadConfig(env: Record<string, string | undefined>, stdoutIsTerminal = false): AppConfig {
  const present: Record<string, string> = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
  const problems: string[] = [];
  for (const name of FILE_SECRETS) {
    const file = present[`${name}_FILE`];
    if (!file) continue;
    if (present[name] !== undefined) {
      problems.push(`${name}_FILE: set either ${name} or ${name}_FILE, not both`);
      continue;
    }
    try {
      present[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  const raw = plainToInstance(EnvironmentVariables, present, { exposeDefaultValues: true });
  const errors = validateSync(raw, { whitelist: false });
  problems.push(
    ...errors.map(
      // Secrets are named, never echoed; a database URL is shown without its password.
      (e) =>
        `${e.property}${/SECRET|TOKEN/.test(e.property) ? '' : `=${JSON.stringify(shownValue(e.property, present[e.property]))}`}: ${Object.values(e.constraints ?? {}).join('; ')}`,
    ),
  );
  if (raw.STORAGE_DRIVER === 's3' && !raw.S3_BUCKET) problems.push('S3_BUCKET: required when STORAGE_DRIVER=s3');
  if (raw.STORAGE_DRIVER === 's3' && !!raw.S3_ACCESS_KEY_ID !== !!raw.S3_SECRET_ACCESS_KEY) {
    problems.push('S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY: set both or neither (neither: the AWS default credential chain)');
  }
  const webhookSecretKeys = parseSecretKeys(raw.WEBHOOK_SECRET_KEYS, raw.WEBHOOK_SECRET_KEY, problems);
  const production = raw.NODE_ENV === 'production';
  if (production && !webhookSecretKeys.length && !problems.some((p) => p.startsWith('WEBHOOK_SECRET_KEY'))) {
    problems.push(
      'WEBHOOK_SECRET_KEY: required with NODE_ENV=production (32 random bytes, e.g. `openssl rand -hex 32`), so webhook signing secrets are encrypted at rest',
    );
  }
  const mcpAllowedOrigins = parseOrigins(raw.MCP_ALLOWED_ORIGINS ?? '');
  if (typeof mcpAllowedOrigins === 'string')
    problems.push(`MCP_ALLOWED_ORIGINS=${JSON.stringify(env.MCP_ALLOWED_ORIGINS)}: ${mcpAllowedOrigins}`);
  const oidcSet = [raw.OIDC_ISSUER, raw.OIDC_CLIENT_ID, raw.OIDC_CLIENT_SECRET].filter(Boolean).length;
  if (oidcSet > 0 && oidcSet < 3)
    problems.push('OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET: set all three to enable OpenID Connect sign-in, or none');
  const trustProxy = parseTrustProxy(raw.TRUST_PROXY ?? '');
  if (typeof trustProxy === 'string') problems.push(`TRUST_PROXY=${JSON.stringify(env.TRUST_PROXY)}: ${trustProxy}`);
  const egressProxies = parseEgressProxies(raw.EGRESS_PROXIES);
  if (typeof egressProxies === 'string') problems.push(`EGRESS_PROXIES: ${egressProxies}`);
  if (problems.length) throw new ConfigError(problems);
  return {
    port: raw.PORT,
    databaseUrl: raw.DATABASE_URL,
    redisUrl: raw.REDIS_URL,
    queuePrefix: raw.QUEUE_PREFIX,
    publicBaseUrl: (raw.PUBLIC_BASE_URL ?? `http://localhost:${raw.PORT}`).replace(/\/+$/, ''),
    storageDir: resolve(raw.STORAGE_DIR),
    chromiumPath: raw.CHROMIUM_PATH ?? null,
    chromiumSandbox: raw.CHROMIUM_SANDBOX === 'on',
    ssrfAllowPrivate: raw.SSRF_ALLOW_PRIVATE,
    webhookAllowHttp: raw.WEBHOOK_ALLOW_HTTP,
    webhookRetryDelaysS: raw.WEBHOOK_RETRY_DELAYS.split(',').map((s) => Number(s.trim())),
    webhookTimeoutMs: raw.WEBHOOK_TIMEOUT_MS,
    webhookDisableAfterS: raw.WEBHOOK_DISABLE_AFTER_S,
    webhookSecretKeys,
    production,
    rateLimitPerSecond: raw.RATE_LIMIT_PER_SECOND,
    maxPendingJobsPerAccount: raw.MAX_PENDING_JOBS_PER_ACCOUNT,
    resultTtlDays: raw.RESULT_TTL_DAYS,
    legacyFreeCap: raw.LEGACY_FREE_CAP,
    workerMode: raw.WORKER_MODE,
    captureTimeoutMs: raw.CAPTURE_TIMEOUT_MS,
    renderWaitMs: raw.RENDER_WAIT_MS,
    monitors: {
      minIntervalS: raw.MONITOR_MIN_INTERVAL_S,
      pauseAfterFailures: raw.MONITOR_PAUSE_AFTER_FAILURES,
      tickMs: raw.MONITOR_TICK_MS,
      compareConcurrency: raw.COMPARE_CONCURRENCY,
    },
    captureConcurrency: raw.CAPTURE_CONCURRENCY,
    accountMaxRunning: raw.ACCOUNT_MAX_RUNNING,
    maxImagePixels: raw.MAX_IMAGE_PIXELS,
    egressProxies: egressProxies as Record<string, UpstreamProxy>,
    captureWarmContexts: raw.CAPTURE_WARM_CONTEXTS,
    captureBrowserRecycleAfter: raw.CAPTURE_BROWSER_RECYCLE_AFTER,
    ffmpegPath: raw.FFMPEG_PATH ?? FFMPEG_CANDIDATES.find((p) => existsSync(p)) ?? 'ffmpeg',
    runConcurrency: raw.RUN_CONCURRENCY,
    runsAllowEvaluate: raw.RUNS_ALLOW_EVALUATE,
    logLevel: raw.LOG_LEVEL,
    dependencyTimeoutMs: raw.DEPENDENCY_TIMEOUT_MS,
    dashboardUrl: raw.DASHBOARD_URL ? raw.DASHBOARD_URL.replace(/\/+$/, '') : null,
    dashboardSignup: raw.DASHBOARD_SIGNUP,
    passwordHashConcurrency: raw.PASSWORD_HASH_CONCURRENCY,
    trustProxy: trustProxy as AppConfig['trustProxy'],
    oidc:
      oidcSet === 3
        ? { issuer: raw.OIDC_ISSUER as string, clientId: raw.OIDC_CLIENT_ID as string, clientSecret: raw.OIDC_CLIENT_SECRET as string }
        : null,
    mcpAllowedOrigins: mcpAllowedOrigins as string[],
    logFormat: raw.LOG_FORMAT ?? (stdoutIsTerminal ? 'pretty' : 'json'),
    metricsToken: raw.METRICS_TOKEN ?? null,
    metricsPort: raw.METRICS_PORT ?? null,
    adminToken: raw.ADMIN_TOKEN ?? null,
    workerHealthPort: raw.WORKER_HEALTH_PORT,
    migrateOnStart: raw.MIGRATE_ON_START,
    shutdownDelayMs: raw.SHUTDOWN_DELAY_MS,
    storageDriver: raw.STORAGE_DRIVER,
    s3:
      raw.STORAGE_DRIVER === 's3'
        ? {
            bucket: raw.S3_BUCKET as string,
            endpoint: raw.S3_ENDPOINT,
            region: raw.S3_REGION,
            accessKeyId: raw.S3_ACCESS_KEY_ID,
            secretAccessKey: raw.S3_SECRET_ACCESS_KEY,
            forcePathStyle: raw.S3_FORCE_PATH_STYLE,
          }
        : null,
  };
}

/**
 * The webhook secret keys, newest first, from `WEBHOOK_SECRET_KEYS` (comma-separated) or else
 * `WEBHOOK_SECRET_KEY`; appends a line to `problems` for each malformed key, for both set at once and
 * for a key listed twice.
 */
function parseSecretKeys(list: string | undefined, single: string | undefined, problems: string[]): Buffer[] {
  if (list !== undefined && single !== undefined) {
    problems.push('WEBHOOK_SECRET_KEY and WEBHOOK_SECRET_KEYS: set only one (WEBHOOK_SECRET_KEYS=<new>,<old> to rotate)');
    return [];
  }
  if (list === undefined) return single !== undefined && SECRET_KEY_PATTERN.test(single) ? [decodeSecretKey(single)] : [];
  const entries = list
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const keys: Buffer[] = [];
  entries.forEach((entry, i) => {
    if (!SECRET_KEY_PATTERN.test(entry)) {
      problems.push(`WEBHOOK_SECRET_KEYS: key ${i + 1} must be 32 bytes as 64 hex characters or base64 (44 characters)`);
    } else if (keys.some((k) => k.equals(decodeSecretKey(entry)))) {
      problems.push(`WEBHOOK_SECRET_KEYS: key ${i + 1} is listed twice`);
    } else {
      keys.push(decodeSecretKey(entry));
    }
  });
  return keys;
}

function decodeSecretKey(key: string): Buffer {
  return Buffer.from(key, key.length === 64 ? 'hex' : 'base64');
}

/**
 * Parses a comma-separated list of origins (`https://app.example.com`, `http://localhost:5173`) into
 * their serialized form (lower-case scheme and host, default port dropped). Returns a problem
 * description instead when an entry is not a bare http(s) origin.
 */
function parseOrigins(list: string): string[] | string {
  const origins: string[] = [];
  for (const entry of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      /* reported below */
    }
    const bare = url && url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    if (!url || !bare || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      return `${JSON.stringify(entry)} is not an origin such as https://app.example.com (scheme, host and optional port only)`;
    }
    origins.push(url.origin);
  }
  return origins;
}

/**
 * `TRUST_PROXY` as Express's `trust proxy` value: empty or `false` → false, `1`-`32` → that many hops,
 * otherwise a comma-separated list of addresses, CIDR subnets and proxy-addr's names (`loopback`,
 * `linklocal`, `uniquelocal`), checked with proxy-addr (the module Express uses for it). `true`
 * (trust any `X-Forwarded-For`) is refused: any client could then pick the IP it is limited by.
 * Returns a problem description for anything else.
 */
function parseTrustProxy(value: string): false | number | string[] | string {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'false') return false;
  if (trimmed === 'true')
    return "trusting every X-Forwarded-For lets any client choose its IP; give the hop count or the proxies' addresses";
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    return hops >= 1 && hops <= 32 ? hops : 'must be a hop count from 1 to 32, or addresses/subnets of the proxies';
  }
  const list = trimmed
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    proxyAddr.compile(list);
  } catch (err) {
    return `${(err as Error).message}; use addresses or subnets (10.0.0.0/8), loopback, linklocal or uniquelocal`;
  }
  return list;
}

/** Base URL of the dashboard for links (CONTRACT.md, "Dashboard"): `DASHBOARD_URL` or `{PUBLIC_BASE_URL}/dashboard`. */
export function dashboardUrlOf(config: Pick<AppConfig, 'dashboardUrl' | 'publicBaseUrl'>): string {
  return config.dashboardUrl ?? `${config.publicBaseUrl}/dashboard`;
}

/** A configuration value as shown in a problem line: URLs without their password. */
function shownValue(name: string, value: string | undefined): string | undefined {
  return name.endsWith('_URL') && value ? value.replace(/^([a-z]+:\/\/[^:@/]*):[^@/]*@/i, '$1:***@') : value;
}

/** The process's configuration from `process.env`; the only reader of `process.env` in the service. */
export function loadConfigFromProcessEnv(): AppConfig {
  return loadConfig(process.env, process.stdout.isTTY === true);
}
