import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorFunction,
  HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { BrowserPool } from '../browser/browser-pool';
import { RUN_PROCESSORS } from '../queue/queues';
import { DrainState } from './drain-state';
import { RedisProbe } from './redis-probe';

/** Time allowed to each readiness check, ms. */
export const CHECK_TIMEOUT_MS = 2000;

/** Time allowed to the browser check (it may launch the browser), ms. */
export const BROWSER_CHECK_TIMEOUT_MS = 15_000;

/** A health answer: HTTP status and the terminus body (`{ status, info, error, details }`). */
export interface HealthAnswer {
  status: 200 | 503;
  body: HealthCheckResult;
}

/**
 * Liveness and readiness (CONTRACT.md, "Health and readiness"). Readiness checks `postgres` always;
 * `redis` and `browser` (one is running or can be launched, and this process takes browser work:
 * `BrowserPool.admitsWork`) when this process runs the queue processors, else `redis` is reported
 * in `details` (with `required: false`) without failing (an API-only process still accepts work
 * while Redis is away); `shutdown` is down from the start of the SIGTERM drain.
 */
@Injectable()
export class HealthService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly typeOrm: TypeOrmHealthIndicator,
    private readonly redis: RedisProbe,
    private readonly drain: DrainState,
    @Inject(RUN_PROCESSORS) private readonly runProcessors: boolean,
    private readonly browsers: BrowserPool,
  ) {}

  /** Liveness: the process answers. Always 200. */
  liveness(): HealthAnswer {
    return { status: 200, body: { status: 'ok', info: {}, error: {}, details: {} } };
  }

  /** Readiness: 200 when every required check is up, else 503 with the failing checks under `error`. */
  async readiness(): Promise<HealthAnswer> {
    const redisCheck = () => this.probe('redis', () => this.redis.ping(), CHECK_TIMEOUT_MS);
    const checks: HealthIndicatorFunction[] = [
      () =>
        this.probe(
          'shutdown',
          async () => {
            if (this.drain.draining) throw new Error('draining: the process received SIGTERM');
          },
          CHECK_TIMEOUT_MS,
        ),
      () => this.typeOrm.pingCheck('postgres', { timeout: CHECK_TIMEOUT_MS }),
    ];
    if (this.runProcessors) {
      checks.push(redisCheck);
      // Says nothing about Chromium's sandbox: `/metrics` does (`glimpse_browser_sandbox`); a worker
      // whose required sandbox cannot start is down here, its start-up log says why.
      checks.push(() => this.probe('browser', () => this.browsers.ensureBrowser(), BROWSER_CHECK_TIMEOUT_MS));
    }
    let answer: HealthAnswer;
    try {
      answer = { status: 200, body: await this.health.check(checks) };
    } catch (err) {
      if (!(err instanceof ServiceUnavailableException)) throw err;
      answer = { status: 503, body: err.getResponse() as HealthCheckResult };
    }
    if (!this.runProcessors) {
      // Reported, not required: an API-only process accepts work while Redis is away.
      const redis = (await redisCheck())['redis'];
      answer.body.details.redis = { ...redis, required: false };
      if (redis.status === 'up') answer.body.info = { ...answer.body.info, redis };
    }
    return answer;
  }

  /**
   * Runs `fn` as indicator `name`: up (with what `fn` resolved to, if anything) when it resolves within
   * `timeoutMs`, down with its message otherwise.
   */
  private async probe<Key extends string>(
    name: Key,
    fn: () => Promise<void | Record<string, unknown>>,
    timeoutMs: number,
  ): Promise<HealthIndicatorResult<Key>> {
    const session = this.indicators.check(name);
    let timer: NodeJS.Timeout | undefined;
    try {
      const data = await Promise.race([
        fn(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return session.up(data ?? undefined);
    } catch (err) {
      return session.down({ message: (err as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
