import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { monthlyCap, Plan } from '../accounts/plan';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiError, ErrorCode } from '../common/api-error';
import { Metrics } from '../metrics/metrics';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { sqlRows } from '../database/sql';
import { EventsService } from '../events/events.service';
import { QuotaUsage } from './quota-usage.entity';
import { QuotaWarning } from './quota-warning.entity';
import { quotaMonthOf, reachedThresholds, secondsUntil, utcDayOf } from './quota-window';

/** A key's quota in the current month. `used` can exceed `limit` after a downgrade; `remaining` never goes below 0. */
export interface QuotaStatus {
  plan: Plan;
  limit: number;
  used: number;
  remaining: number;
  /** 00:00 UTC on the 1st of next month. */
  resetAt: Date;
}

/** Screenshots counted for one key on one UTC day (`YYYY-MM-DD`). */
export interface DailyUsage {
  apiKeyId: string;
  day: string;
  used: number;
}

/** The key a quota belongs to, with its account's current plan. */
export type QuotaKey = Pick<AuthenticatedKey, 'apiKeyId' | 'plan'>;

/**
 * Monthly screenshot quotas per API key (CONTRACT.md, "Quotas"): the atomic reservation made when a
 * job is accepted, the status behind the `X-RateLimit-*` headers, and the `quota.warning` events.
 */
@Injectable()
export class QuotaService {
  private readonly logger = new Logger(QuotaService.name);
  /**
   * The status each request's reservation (or refusal) produced, keyed by the request's caller object
   * (the one the API key guard attached to the request and the handler passed on), so the
   * `X-RateLimit-*` headers come from the reservation's own result without a second usage query.
   */
  private readonly observed = new WeakMap<AuthenticatedKey, QuotaStatus>();

  constructor(
    @InjectRepository(QuotaUsage) private readonly usage: Repository<QuotaUsage>,
    @InjectRepository(QuotaWarning) private readonly warnings: Repository<QuotaWarning>,
    private readonly events: EventsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  /**
   * The status behind the `X-RateLimit-*` headers of a request by `caller`: what a reservation or
   * refusal of this request found, else (a request that reserved nothing) the current status.
   */
  statusFor(caller: AuthenticatedKey): Promise<QuotaStatus> {
    const seen = this.observed.get(caller);
    return seen ? Promise.resolve(seen) : this.status(caller);
  }

  /** The key's plan, cap, usage and reset time for the current month. */
  async status(key: QuotaKey): Promise<QuotaStatus> {
    const { month, resetAt } = quotaMonthOf(this.clock.now());
    return this.toStatus(key.plan, await this.usedIn(key.apiKeyId, month), resetAt);
  }

  /**
   * Counts `count` screenshots (default 1; a batch counts one per item, CONTRACT.md "Batches") against
   * the caller's monthly cap and runs `accept` (which creates and enqueues the jobs). The check and the
   * increment are one SQL statement, so concurrent callers never exceed the cap, and a batch is counted
   * whole or not at all. When `accept` throws, the screenshots are handed back and the error
   * propagates: a rejected request counts nothing. Once it resolves, the 80%/95% warnings the new
   * usage reached are published (once per key, month and threshold).
   *
   * Throws 429 `PLAN_QUOTA_EXCEEDED` (with `Retry-After` and `details { used, limit, plan, resetAt }`)
   * without calling `accept` when the cap is reached.
   */
  async reserve<T>(caller: AuthenticatedKey, accept: () => Promise<T>, count = 1): Promise<T> {
    return this.reserveWith(caller, null, accept, count);
  }

  /**
   * {@link reserve}, with `write` (an `INSERT … SELECT … FROM reservation` statement whose own
   * parameters are `$1…$n`) run in the same statement as the reservation, so both happen or neither,
   * in one round trip (the accept path of `POST /v1/screenshot`, issue 10). `reservation` is a CTE
   * with one row (`used`) when a screenshot was reserved and none when the cap is reached. Throws as
   * {@link reserve}; when `accept` throws, the screenshot is handed back (the caller removes what
   * `write` inserted).
   */
  async reserveWith<T>(
    caller: AuthenticatedKey,
    write: { sql: string; params: unknown[] } | null,
    accept: () => Promise<T>,
    count = 1,
  ): Promise<T> {
    const now = this.clock.now();
    const { month, resetAt } = quotaMonthOf(now);
    const limit = this.capOf(caller.plan);
    const n = write?.params.length ?? 0;
    // The row lock taken by ON CONFLICT serialises concurrent reservations of a key; the WHERE makes
    // the increment conditional, and a cap of 0 inserts nothing.
    const day = utcDayOf(now);
    // The per-day row (the dashboard's usage chart) is counted in the same statement, only when the
    // monthly increment happened; so is `write`.
    const rows = await sqlRows<{ used: number }>(
      this.usage.manager.connection,
      `WITH reservation AS (
         INSERT INTO quota_usage (api_key_id, month, used)
         SELECT $${n + 1}, $${n + 2}::date, $${n + 5}::int WHERE $${n + 5}::int <= $${n + 3}::int
         ON CONFLICT (api_key_id, month) DO UPDATE SET used = quota_usage.used + $${n + 5}::int
         WHERE quota_usage.used + $${n + 5}::int <= $${n + 3}::int
         RETURNING used
       ), daily AS (
         INSERT INTO quota_usage_daily (api_key_id, day, used)
         SELECT $${n + 1}, $${n + 4}::date, $${n + 5}::int FROM reservation
         ON CONFLICT (api_key_id, day) DO UPDATE SET used = quota_usage_daily.used + $${n + 5}::int
       )${write ? `, written AS (${write.sql})` : ''}
       SELECT used FROM reservation`,
      [...(write?.params ?? []), caller.apiKeyId, month, limit, day, count],
    );
    if (!rows.length) throw await this.exceeded(caller, month, resetAt, now);
    let result: T;
    try {
      result = await accept();
    } catch (err) {
      await this.release(caller.apiKeyId, month, day, count);
      this.observed.set(caller, this.toStatus(caller.plan, rows[0].used - count, resetAt));
      throw err;
    }
    const status = this.toStatus(caller.plan, rows[0].used, resetAt);
    this.observed.set(caller, status);
    await this.warnOnThresholds(caller, month, status);
    return result;
  }

  /**
   * Screenshots counted per UTC day of the current month for each of `apiKeyIds` (the dashboard's
   * usage chart): `{ apiKeyId, day: 'YYYY-MM-DD', used }`, days without captures left out, oldest first.
   */
  async dailyUsageThisMonth(apiKeyIds: string[]): Promise<DailyUsage[]> {
    if (!apiKeyIds.length) return [];
    const { month, resetAt } = quotaMonthOf(this.clock.now());
    const rows: { api_key_id: string; day: string; used: number }[] = await this.usage.query(
      `SELECT api_key_id, to_char(day, 'YYYY-MM-DD') AS day, used FROM quota_usage_daily
       WHERE api_key_id = ANY($1) AND day >= $2::date AND day < $3::date AND used > 0
       ORDER BY day, api_key_id`,
      [apiKeyIds, month, resetAt.toISOString().slice(0, 10)],
    );
    return rows.map((r) => ({ apiKeyId: r.api_key_id, day: r.day, used: r.used }));
  }

  private capOf(plan: Plan): number {
    return monthlyCap(plan, this.config.legacyFreeCap);
  }

  /** Screenshots counted for a key in a month (`YYYY-MM-01`); 0 without a row. */
  private async usedIn(apiKeyId: string, month: string): Promise<number> {
    const row = await this.usage.findOne({ select: { used: true }, where: { apiKeyId, month } });
    return row?.used ?? 0;
  }

  private toStatus(plan: Plan, used: number, resetAt: Date): QuotaStatus {
    const limit = this.capOf(plan);
    return { plan, limit, used, remaining: Math.max(0, limit - used), resetAt };
  }

  /** Hands back `count` screenshots reserved in `month` on `day` (the reservation's, even after a rollover). */
  private async release(apiKeyId: string, month: string, day: string, count: number): Promise<void> {
    try {
      await this.usage.query(
        `WITH monthly AS (
           UPDATE quota_usage SET used = GREATEST(used - $4::int, 0) WHERE api_key_id = $1 AND month = $2::date AND used > 0
         )
         UPDATE quota_usage_daily SET used = GREATEST(used - $4::int, 0) WHERE api_key_id = $1 AND day = $3::date AND used > 0`,
        [apiKeyId, month, day, count],
      );
    } catch (err) {
      this.logger.error(`Could not release a reserved screenshot of ${apiKeyId} (${month})`, (err as Error).stack);
    }
  }

  private async exceeded(caller: AuthenticatedKey, month: string, resetAt: Date, now: Date): Promise<ApiError> {
    this.metrics.quotaRejections.inc();
    const status = this.toStatus(caller.plan, await this.usedIn(caller.apiKeyId, month), resetAt);
    this.observed.set(caller, status);
    return new ApiError(
      ErrorCode.PLAN_QUOTA_EXCEEDED,
      429,
      `Monthly quota of ${status.limit} screenshots reached (plan ${status.plan}); it resets at ${resetAt.toISOString()}`,
      { used: status.used, limit: status.limit, plan: status.plan, resetAt: resetAt.toISOString() },
      { 'Retry-After': String(secondsUntil(resetAt, now)) },
    );
  }

  /**
   * Publishes `quota.warning` for each threshold `status.used` has reached and no request has
   * claimed yet this month: the insert of the (key, month, threshold) row decides who publishes.
   * The job is already accepted here, so failures are logged, not thrown; a threshold whose event
   * could not be published is unclaimed again, so the next accepted job retries it.
   */
  private async warnOnThresholds(caller: AuthenticatedKey, month: string, status: QuotaStatus): Promise<void> {
    const reached = reachedThresholds(status.used, status.limit);
    if (!reached.length) return;
    try {
      const claimed: { threshold_percent: number }[] = await this.warnings.query(
        `INSERT INTO quota_warnings (api_key_id, month, threshold_percent, created_at)
         SELECT $1, $2::date, t, $4 FROM unnest($3::smallint[]) AS t
         ON CONFLICT DO NOTHING
         RETURNING threshold_percent`,
        [caller.apiKeyId, month, reached, this.clock.now()],
      );
      for (const { threshold_percent: percent } of claimed) {
        const data = {
          threshold: percent / 100,
          used: status.used,
          limit: status.limit,
          remaining: status.remaining,
          resetAt: status.resetAt.toISOString(),
          apiKeyId: caller.apiKeyId,
        };
        await this.events.publish(caller.accountId, 'quota.warning', data).catch(async (err) => {
          this.logger.error(`Could not publish quota.warning ${percent}% for ${caller.apiKeyId}`, (err as Error).stack);
          await this.warnings.delete({ apiKeyId: caller.apiKeyId, month, thresholdPercent: percent });
        });
      }
    } catch (err) {
      this.logger.error(`Could not record quota warnings for ${caller.apiKeyId}`, (err as Error).stack);
    }
  }
}
