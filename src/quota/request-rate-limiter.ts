import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { BurstyRateLimiter, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiError, ErrorCode } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Metrics } from '../metrics/metrics';
import './quota-error-details';

/** How long the burst allowance takes to refill, in seconds. */
const BURST_WINDOW_S = 10;
/** Longest wait for Redis per request, ms: past it the request is let through unlimited. */
const REDIS_COMMAND_TIMEOUT_MS = 250;
/** At most one "Redis unreachable" warning per this many ms. */
const WARN_EVERY_MS = 60_000;

/**
 * The short-interval request rate per API key (CONTRACT.md, "Rate limits and back-pressure"):
 * `RATE_LIMIT_PER_SECOND` requests per second on `/v1/*` and the MCP endpoint, shared by every API
 * process through Redis (rate-limiter-flexible), with bursts up to twice that within one second (a
 * second allowance of the same size that refills every {@link BURST_WINDOW_S} s). 0 turns it off.
 *
 * While Redis cannot answer (down, or slower than {@link REDIS_COMMAND_TIMEOUT_MS}) the limit is not
 * applied: requests pass (counted in `glimpse_rate_limit_skipped_total`) and a warning is logged at
 * most once a minute. The Redis client is its own,
 * without an offline queue, so a request never waits for Redis to come back.
 */
@Injectable()
export class RequestRateLimiter implements OnModuleDestroy {
  private readonly logger = new Logger(RequestRateLimiter.name);
  private readonly limitPerSecond: number;
  private readonly redis: Redis | null = null;
  private readonly limiter: BurstyRateLimiter | null = null;
  private lastWarningAt = 0;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.limitPerSecond = config.rateLimitPerSecond;
    if (!this.limitPerSecond) return;
    this.redis = new Redis(config.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    this.redis.on('error', (err: Error) => this.warnUnlimited(err));
    const keyPrefix = `${config.queuePrefix}:rate`;
    const common = { storeClient: this.redis, rejectIfRedisNotReady: true };
    this.limiter = new BurstyRateLimiter(
      new RateLimiterRedis({ ...common, keyPrefix, points: this.limitPerSecond, duration: 1 }),
      new RateLimiterRedis({ ...common, keyPrefix: `${keyPrefix}:burst`, points: this.limitPerSecond, duration: BURST_WINDOW_S }),
    );
  }

  /** Whether a limit is configured. */
  get enabled(): boolean {
    return this.limiter !== null;
  }

  /**
   * Counts one request of `caller`'s key. Throws 429 `RATE_LIMITED` with `Retry-After` (whole seconds,
   * at least 1) and `details: { limit, windowSeconds }` when over the rate. Never throws otherwise.
   */
  async consume(caller: Pick<AuthenticatedKey, 'apiKeyId'>): Promise<void> {
    if (!this.limiter) return;
    try {
      await this.limiter.consume(caller.apiKeyId);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        this.metrics.rateLimitSkipped.inc();
        this.warnUnlimited(err as Error);
        return;
      }
      this.metrics.rateLimited.inc();
      const retryAfterS = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      throw new ApiError(
        ErrorCode.RATE_LIMITED,
        429,
        `Too many requests: this API key may make ${this.limitPerSecond} requests per second (bursts up to ${2 * this.limitPerSecond}); retry after ${retryAfterS} s`,
        { limit: this.limitPerSecond, windowSeconds: 1 },
        { 'Retry-After': String(retryAfterS) },
      );
    }
  }

  private warnUnlimited(err: Error): void {
    if (Date.now() - this.lastWarningAt < WARN_EVERY_MS) return;
    this.lastWarningAt = Date.now();
    this.logger.warn(`Redis unreachable (${err.message}): the per-second request limit is not applied meanwhile`);
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }
}
