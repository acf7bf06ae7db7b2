import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import proxyAddr from 'proxy-addr';
import { configSection, toInt } from './config-section';

/** The server section's variables (CONTRACT.md, "Configuration (environment)"): ports, base URL, process role, logs, probes, proxies in front. */
class ServerVariables {
  @Transform(toInt) @IsInt() @Min(0) @Max(65535) PORT = 3000;
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['http', 'https'] })
  PUBLIC_BASE_URL?: string;
  /** `production` requires a webhook secret key; any other value (development, test) does not. */
  @IsOptional() @IsString() NODE_ENV?: string;
  @IsIn(['inline', 'off']) WORKER_MODE: 'inline' | 'off' = 'inline';
  /** Comma-separated origins (`https://host[:port]`) whose browser requests may reach the MCP endpoint. */
  @IsString() MCP_ALLOWED_ORIGINS = '';
  /** Bound on waiting for PostgreSQL or Redis within a request (CONTRACT.md, "Rate limits and back-pressure"). */
  @Transform(toInt) @IsInt() @Min(100) @Max(60000) DEPENDENCY_TIMEOUT_MS = 5000;
  /** Which proxies' `X-Forwarded-For` names the client: unset/`false`, a hop count, or addresses/subnets. */
  @IsOptional() @IsString() TRUST_PROXY?: string;
  @IsIn(['error', 'warn', 'log', 'debug', 'verbose']) LOG_LEVEL: 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';
  @IsOptional() @IsIn(['json', 'pretty']) LOG_FORMAT?: 'json' | 'pretty';
  @IsOptional() @IsString() @Matches(/^\S{16,}$/, { message: 'must be at least 16 characters without spaces' }) METRICS_TOKEN?: string;
  @IsOptional() @IsString() @Matches(/^\S{16,}$/, { message: 'must be at least 16 characters without spaces' }) ADMIN_TOKEN?: string;
  @Transform(toInt) @IsInt() @Min(0) @Max(65535) WORKER_HEALTH_PORT = 3001;
  @IsOptional() @Transform(toInt) @IsInt() @Min(1) @Max(65535) METRICS_PORT?: number;
  @Transform(toInt) @IsInt() @Min(0) @Max(120000) SHUTDOWN_DELAY_MS = 0;
}

/** The server's part of `AppConfig`. Units are in the field names (ms). */
export interface ServerConfig {
  port: number;
  /** Base of public result URLs, without a trailing slash (e.g. `http://localhost:3000`). */
  publicBaseUrl: string;
  /** `NODE_ENV=production`: stricter start-up checks (a webhook secret key is required). */
  production: boolean;
  workerMode: 'inline' | 'off';
  logLevel: 'error' | 'warn' | 'log' | 'debug' | 'verbose';
  /** `json`: one JSON object per line (default when stdout is not a terminal); `pretty`: coloured text. */
  logFormat: 'json' | 'pretty';
  /**
   * How long a request may wait for PostgreSQL (a new connection) or Redis (queueing an accepted job),
   * ms. PostgreSQL not answering within it: 503 `SERVICE_UNAVAILABLE`; Redis: the job stays in
   * PostgreSQL and the reconciler queues it (CONTRACT.md, "Rate limits and back-pressure").
   */
  dependencyTimeoutMs: number;
  /**
   * Express's `trust proxy` setting from `TRUST_PROXY` (https://expressjs.com/en/guide/behind-proxies.html):
   * false (the connection's address is the client's), a number of proxy hops in front of the app, or
   * the addresses/subnets (and `loopback`, `linklocal`, `uniquelocal`) of trusted proxies. Decides the
   * client IP the dashboard's sign-in limits count by.
   */
  trustProxy: false | number | string[];
  /**
   * Origins (`scheme://host[:port]`, lower case, no trailing slash) allowed to call the MCP endpoint from
   * a browser; a request with any other `Origin` header is refused with 403. Empty: only requests
   * without `Origin` (non-browser clients) are served.
   */
  mcpAllowedOrigins: string[];
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
  /**
   * After SIGTERM, how long the API keeps accepting requests while `/ready` answers 503 (so a load
   * balancer stops routing to it) before it closes its listener and drains, ms.
   */
  shutdownDelayMs: number;
}

/** The server section (docs/configuration.md). */
export const serverSection = configSection({
  variables: ServerVariables,
  read(raw, { env, problems, production, stdoutIsTerminal }): ServerConfig {
    const mcpAllowedOrigins = parseOrigins(raw.MCP_ALLOWED_ORIGINS ?? '');
    if (typeof mcpAllowedOrigins === 'string')
      problems.push(`MCP_ALLOWED_ORIGINS=${JSON.stringify(env.MCP_ALLOWED_ORIGINS)}: ${mcpAllowedOrigins}`);
    const trustProxy = parseTrustProxy(raw.TRUST_PROXY ?? '');
    if (typeof trustProxy === 'string') problems.push(`TRUST_PROXY=${JSON.stringify(env.TRUST_PROXY)}: ${trustProxy}`);
    return {
      port: raw.PORT,
      publicBaseUrl: (raw.PUBLIC_BASE_URL ?? `http://localhost:${raw.PORT}`).replace(/\/+$/, ''),
      production,
      workerMode: raw.WORKER_MODE,
      logLevel: raw.LOG_LEVEL,
      logFormat: raw.LOG_FORMAT ?? (stdoutIsTerminal ? 'pretty' : 'json'),
      dependencyTimeoutMs: raw.DEPENDENCY_TIMEOUT_MS,
      trustProxy: trustProxy as ServerConfig['trustProxy'],
      mcpAllowedOrigins: mcpAllowedOrigins as string[],
      metricsToken: raw.METRICS_TOKEN ?? null,
      metricsPort: raw.METRICS_PORT ?? null,
      adminToken: raw.ADMIN_TOKEN ?? null,
      workerHealthPort: raw.WORKER_HEALTH_PORT,
      shutdownDelayMs: raw.SHUTDOWN_DELAY_MS,
    };
  },
});

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
