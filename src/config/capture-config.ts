import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { configSection, toBool, toInt } from './config-section';
import { parseEgressProxies, UpstreamProxy } from './egress-proxies';

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

/** The capture and browser section's variables (CONTRACT.md, "Configuration (environment)"). */
class CaptureVariables {
  @IsOptional() @IsString() CHROMIUM_PATH?: string;
  /** `on` (default): Chromium's sandbox is required, a worker without it takes no work; `off`: Chromium runs without it. */
  @IsIn(['on', 'off']) CHROMIUM_SANDBOX: 'on' | 'off' = 'on';
  @Transform(toBool) @IsBoolean() SSRF_ALLOW_PRIVATE = false;
  /** JSON `{ "<id>": "http://user:pass@host:port" }`: the upstream proxies of the `proxy` option (src/config/egress-proxies.ts). */
  @IsOptional() @IsString() EGRESS_PROXIES?: string;
  @Transform(toInt) @IsInt() @Min(1000) @Max(120000) CAPTURE_TIMEOUT_MS = 30000;
  @Transform(toInt) @IsInt() @Min(1) @Max(32) CAPTURE_CONCURRENCY = defaultCaptureConcurrency();
  /** Capture jobs of one account running at once across all workers; 0: no cap beyond the turn order (CONTRACT.md, "Tenancy: fair share and isolation"). */
  @Transform(toInt) @IsInt() @Min(0) @Max(100000) ACCOUNT_MAX_RUNNING = 0;
  /** Device pixels one image may have (CONTRACT.md, "Capture options, second set": image size cap). */
  @Transform(toInt) @IsInt() @Min(10000) @Max(1000000000) MAX_IMAGE_PIXELS = 100000000;
  @Transform(toInt) @IsInt() @Min(0) @Max(32) CAPTURE_WARM_CONTEXTS = 2;
  @Transform(toInt) @IsInt() @Min(1) @Max(1000000) CAPTURE_BROWSER_RECYCLE_AFTER = 500;
}

/** Captures' and the browser's part of `AppConfig`. Units are in the field names (ms). */
export interface CaptureConfig {
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
  /** Navigation timeout of one capture, in ms. */
  captureTimeoutMs: number;
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
}

/** The capture and browser section (docs/configuration.md). */
export const captureSection = configSection({
  variables: CaptureVariables,
  read(raw, { problems }): CaptureConfig {
    const egressProxies = parseEgressProxies(raw.EGRESS_PROXIES);
    if (typeof egressProxies === 'string') problems.push(`EGRESS_PROXIES: ${egressProxies}`);
    return {
      chromiumPath: raw.CHROMIUM_PATH ?? null,
      chromiumSandbox: raw.CHROMIUM_SANDBOX === 'on',
      ssrfAllowPrivate: raw.SSRF_ALLOW_PRIVATE,
      captureTimeoutMs: raw.CAPTURE_TIMEOUT_MS,
      captureConcurrency: raw.CAPTURE_CONCURRENCY,
      accountMaxRunning: raw.ACCOUNT_MAX_RUNNING,
      maxImagePixels: raw.MAX_IMAGE_PIXELS,
      egressProxies: egressProxies as Record<string, UpstreamProxy>,
      captureWarmContexts: raw.CAPTURE_WARM_CONTEXTS,
      captureBrowserRecycleAfter: raw.CAPTURE_BROWSER_RECYCLE_AFTER,
    };
  },
});
