import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { ApiError, ErrorCode } from './api-error';

/** A fixed-window limit: at most `points` per key in `durationS` seconds. */
export interface PostgresLimit {
  /** Names the limit; keys of different limits never collide. */
  name: string;
  points: number;
  durationS: number;
}

/** Result of {@link PostgresRateLimiter.consume}: allowed, or refused with the wait in whole seconds (≥ 1). */
export type LimitDecision = { allowed: true } | { allowed: false; retryAfterS: number };

/**
 * A rate limit whose counters live in PostgreSQL (table `rate_limits`, created by a migration), shared
 * by every process of the deployment and counted atomically by one upsert per attempt
 * (rate-limiter-flexible's RateLimiterPostgres). For the rare, abuse-prone actions where the request
 * needs PostgreSQL anyway (sign-up, webhook and storage destination tests), so Redis being away does not lift the limit.
 */
export class PostgresRateLimiter {
  private readonly limiter: RateLimiterPostgres;

  constructor(
    dataSource: DataSource,
    private readonly limit: PostgresLimit,
  ) {
    this.limiter = new RateLimiterPostgres({
      storeClient: dataSource,
      storeType: 'typeorm',
      tableName: 'rate_limits',
      tableCreated: true,
      keyPrefix: limit.name,
      points: limit.points,
      duration: limit.durationS,
    });
  }

  /** Counts one attempt for `key`; refused attempts are counted too (they do not extend the window). Database errors propagate. */
  async consume(key: string): Promise<LimitDecision> {
    try {
      await this.limiter.consume(key);
      return { allowed: true };
    } catch (err) {
      if (err instanceof RateLimiterRes) return { allowed: false, retryAfterS: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
      throw err;
    }
  }

  /**
   * Counts one attempt for `key` as {@link consume}, and refuses one over the limit with 429
   * `RATE_LIMITED` in the envelope (CONTRACT.md, "Rate limits and back-pressure"): `message` is
   * `<tooMany>; retry after <n> s`, `details: { limit, windowSeconds }`, header `Retry-After` (whole
   * seconds, ≥ 1). Call it before the action does anything. Database errors propagate.
   */
  async consumeOrRefuse(key: string, tooMany: string): Promise<void> {
    const decision = await this.consume(key);
    if (decision.allowed) return;
    throw new ApiError(
      ErrorCode.RATE_LIMITED,
      429,
      `${tooMany}; retry after ${decision.retryAfterS} s`,
      { limit: this.limit.points, windowSeconds: this.limit.durationS },
      { 'Retry-After': String(decision.retryAfterS) },
    );
  }
}
