import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { accountMonthlyCeiling, monthlyCap, Plan } from '../accounts/plan';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiError, ErrorCode } from '../common/api-error';
import { sqlRows } from '../sql/sql';
import { SqlParams } from '../sql/sql-statement';
import { Metrics } from '../metrics/metrics';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { EventsService } from '../events/events.service';
import { QuotaUsage } from './quota-usage.entity';
import { QuotaWarning } from './quota-warning.entity';
import './quota-error-details';
import { secondsUntil, utcDayOf, utcMonthOf } from '../common/utc-month';
import { reachedThresholds } from './quota-window';

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

/** Months of usage rows kept, the current one included (docs/durability.md#data-retention). */
export const USAGE_RETENTION_MONTHS = 13;

/** The key a quota belongs to, with its account's current plan. */
export type QuotaKey = Pick<AuthenticatedKey, 'apiKeyId' | 'plan'>;

/**
 * Monthly screenshot quotas per API key and the account ceiling above them (CONTRACT.md, "Quotas"): the
 * atomic count made inside a job's acceptance statement, the status behind the `X-RateLimit-*` headers, and the `quota.warning` events.
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
   * refusal of this request found, else (a request that reserved nothing) the usage read with the key
   * ({@link AuthenticatedKey.usageAtAuth}), else the current status (one query).
   */
  statusFor(caller: AuthenticatedKey): Promise<QuotaStatus> {
    const known = this.knownStatusFor(caller);
    return known ? Promise.resolve(known) : this.status(caller);
  }

  /**
   * {@link statusFor} when it needs no query (what a reservation or refusal of this request found, or
   * the usage read with the key this month), synchronously; else null.
   */
  knownStatusFor(caller: AuthenticatedKey): QuotaStatus | null {
    const seen = this.observed.get(caller);
    if (seen) return seen;
    const { month, resetAt } = utcMonthOf(this.clock.now());
    return caller.usageAtAuth?.month === month ? this.toStatus(caller.plan, caller.usageAtAuth.used, resetAt) : null;
  }

  /** The key's plan, cap, usage and reset time for the current month. */
  async status(key: QuotaKey): Promise<QuotaStatus> {
    const { month, resetAt } = utcMonthOf(this.clock.now());
    return this.toStatus(key.plan, await this.usedIn(key.apiKeyId, month), resetAt);
  }

  /**
   * The plan, cap, usage and reset time of this month for each of `apiKeyIds` (all on `plan`), keyed by
   * key id: one query for all of them (the dashboard's key list); a key without usage counts 0.
   */
  async statusOfKeys(apiKeyIds: readonly string[], plan: Plan): Promise<Map<string, QuotaStatus>> {
    const { month, resetAt } = utcMonthOf(this.clock.now());
    const rows = apiKeyIds.length
      ? await sqlRows<{ api_key_id: string; used: number }>(
          this.usage.manager.connection,
          'SELECT api_key_id, used FROM quota_usage WHERE api_key_id = ANY($1) AND month = $2::date',
          [apiKeyIds, month],
        )
      : [];
    const used = new Map(rows.map((r) => [r.api_key_id, r.used]));
    return new Map(apiKeyIds.map((id) => [id, this.toStatus(plan, used.get(id) ?? 0, resetAt)]));
  }

  /**
   * The quota part of an acceptance statement (`AcceptanceService`): counts `count` screenshots (a
   * batch counts one per item, CONTRACT.md "Batches"; a run one) against the caller's monthly cap and
   * its account's monthly ceiling (CONTRACT.md "Quotas", {@link accountMonthlyCeiling}), all or nothing,
   * when the statement's `gate` part has a row. Returns the `WITH` parts `account_quota` (the account's
   * usage this month, its row locked: {@link accountQuotaSql}), `reservation` (the key's monthly
   * increment, `RETURNING used`; no row when refused) and `reservation_daily` (the per-day row of the
   * dashboard's usage chart, counted only with the monthly one); their values go into `params`.
   *
   * The account's row lock serialises the acceptances of all its keys and gives its latest usage; the
   * key's row lock taken by `ON CONFLICT` serialises those of one key and its `WHERE` sees the key's
   * latest usage. The key's row is counted only when both fit, and the account's row follows it (the
   * trigger on `quota_usage`, migration `AccountQuota1795745000000`), so under any concurrency neither
   * the cap nor the ceiling is exceeded and a refusal counts nothing. Locks are taken account first,
   * then key, in every acceptance.
   *
   * `settle(used)` takes what `reservation` returned: the key's quota after the increment (also behind
   * this request's `X-RateLimit-*` headers, which stay per key; pass it to {@link warnOnThresholds}),
   * or, for `null`, throws 429 `PLAN_QUOTA_EXCEEDED` (with `Retry-After` and `details { scope, used,
   * limit, plan, resetAt }`: `scope` `"key"` with the key's usage and cap, or `"account"` with the
   * account's usage and ceiling when only the ceiling was in the way; CONTRACT.md "Quotas").
   */
  reservation(
    params: SqlParams,
    caller: AuthenticatedKey,
    count: number,
    gate: string,
  ): { sql: string; settle(used: number | null): Promise<QuotaStatus> } {
    const now = this.clock.now();
    const { month, resetAt } = utcMonthOf(now);
    const limit = this.capOf(caller.plan);
    const sql = `${this.accountQuotaSql(params, caller.accountId, month)}, reservation AS (
         INSERT INTO quota_usage (api_key_id, month, used)
         SELECT ${params.add(caller.apiKeyId)}, ${params.add(month)}::date, ${params.add(count)}::int FROM ${gate}, account_quota
          WHERE ${params.add(count)}::int <= ${params.add(limit)}::int
            AND account_quota.used + ${params.add(count)}::int <= ${params.add(this.ceilingOf(caller.plan))}::int
         ON CONFLICT (api_key_id, month) DO UPDATE SET used = quota_usage.used + EXCLUDED.used
         WHERE quota_usage.used + EXCLUDED.used <= ${params.add(limit)}::int
         RETURNING used
       ), reservation_daily AS (
         INSERT INTO quota_usage_daily (api_key_id, day, used)
         SELECT ${params.add(caller.apiKeyId)}, ${params.add(utcDayOf(now))}::date, ${params.add(count)}::int FROM reservation
         ON CONFLICT (api_key_id, day) DO UPDATE SET used = quota_usage_daily.used + EXCLUDED.used
       )`;
    const settle = async (used: number | null): Promise<QuotaStatus> => {
      if (used === null) throw await this.exceeded(caller, count, month, resetAt, now);
      const status = this.toStatus(caller.plan, used, resetAt);
      this.observed.set(caller, status);
      return status;
    };
    return { sql, settle };
  }

  /**
   * The account's screenshots this month against its ceiling (CONTRACT.md "Quotas": all its keys,
   * revoked ones included): `limit` is {@link accountMonthlyCeiling}; `used` can exceed it after a
   * downgrade, `remaining` never goes below 0. One indexed read.
   */
  async accountStatus(accountId: string, plan: Plan): Promise<QuotaStatus> {
    const { month, resetAt } = utcMonthOf(this.clock.now());
    const limit = this.ceilingOf(plan);
    const used = await this.accountUsedIn(accountId, month);
    return { plan, limit, used, remaining: Math.max(0, limit - used), resetAt };
  }

  /**
   * The `account_quota` part of an acceptance statement: one row `{ used }`, the account's screenshots in
   * `month` (`YYYY-MM-01`; a row of an earlier month counts 0), read with its row locked (`FOR UPDATE`:
   * the latest value, held until the transaction ends). Every account has its row from its creation
   * (migration `AccountQuota1795745000000`).
   */
  private accountQuotaSql(params: SqlParams, accountId: string, month: string): string {
    const monthParam = params.add(month);
    return `account_quota AS (
         SELECT CASE WHEN month = ${monthParam}::date THEN used ELSE 0 END AS used
           FROM account_quota_usage WHERE account_id = ${params.add(accountId)} FOR UPDATE
       )`;
  }

  /**
   * Deletes up to `limit` usage rows (monthly and daily) and quota-warning claims of months before the
   * {@link USAGE_RETENTION_MONTHS} most recent ones (the current month included); returns how many
   * rows. Run in batches by the retention job (uses the indexes on `month` and the daily key).
   */
  async purgeOldUsage(limit: number): Promise<number> {
    const now = this.clock.now();
    const { month: oldestKept } = utcMonthOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - USAGE_RETENTION_MONTHS + 1, 1)));
    let deleted = 0;
    for (const [table, column] of [
      ['quota_usage', 'month'],
      ['quota_usage_daily', 'day'],
      ['quota_warnings', 'month'],
    ] as const) {
      const result = await this.usage.manager
        .createQueryBuilder()
        .delete()
        .from(table)
        .where(`ctid IN (SELECT ctid FROM ${table} WHERE ${column} < :oldestKept::date LIMIT :limit)`, { oldestKept, limit })
        .execute();
      deleted += result.affected ?? 0;
    }
    return deleted;
  }

  /**
   * Screenshots counted per UTC day of the current month for each of `apiKeyIds` (the dashboard's
   * usage chart): `{ apiKeyId, day: 'YYYY-MM-DD', used }`, days without captures left out, oldest first.
   */
  async dailyUsageThisMonth(apiKeyIds: string[]): Promise<DailyUsage[]> {
    if (!apiKeyIds.length) return [];
    const { month, resetAt } = utcMonthOf(this.clock.now());
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

  private ceilingOf(plan: Plan): number {
    return accountMonthlyCeiling(plan, this.config.legacyFreeCap);
  }

  /** Screenshots counted for an account's keys together in a month (`YYYY-MM-01`); 0 when its row counts an earlier month. */
  private async accountUsedIn(accountId: string, month: string): Promise<number> {
    const [row] = await sqlRows<{ used: number }>(
      this.usage.manager.connection,
      'SELECT CASE WHEN month = $2::date THEN used ELSE 0 END AS used FROM account_quota_usage WHERE account_id = $1',
      [accountId, month],
    );
    return row?.used ?? 0;
  }

  /** Screenshots counted for a key in a month (`YYYY-MM-01`); 0 without a row. One prepared statement: a poll's `X-RateLimit-*` headers read it. */
  private async usedIn(apiKeyId: string, month: string): Promise<number> {
    const [row] = await sqlRows<{ used: number }>(
      this.usage.manager.connection,
      'SELECT used FROM quota_usage WHERE api_key_id = $1 AND month = $2::date',
      [apiKeyId, month],
    );
    return row?.used ?? 0;
  }

  private toStatus(plan: Plan, used: number, resetAt: Date): QuotaStatus {
    const limit = this.capOf(plan);
    return { plan, limit, used, remaining: Math.max(0, limit - used), resetAt };
  }

  /**
   * The 429 of a refused reservation of `count`: scope `"key"` when the key's cap is in the way (also
   * when both are), else `"account"` (its ceiling). Read after the refusal, so the numbers are the
   * latest; the request's `X-RateLimit-*` headers get the key's status either way.
   */
  private async exceeded(caller: AuthenticatedKey, count: number, month: string, resetAt: Date, now: Date): Promise<ApiError> {
    this.metrics.quotaRejections.inc();
    const status = this.toStatus(caller.plan, await this.usedIn(caller.apiKeyId, month), resetAt);
    this.observed.set(caller, status);
    const retryAfter = { 'Retry-After': String(secondsUntil(resetAt, now)) };
    if (status.used + count > status.limit) {
      return new ApiError(
        ErrorCode.PLAN_QUOTA_EXCEEDED,
        429,
        `Monthly quota of ${status.limit} screenshots for this API key reached (plan ${status.plan}); it resets at ${resetAt.toISOString()}`,
        { scope: 'key', used: status.used, limit: status.limit, plan: status.plan, resetAt: resetAt.toISOString() },
        retryAfter,
      );
    }
    const account = await this.accountStatus(caller.accountId, caller.plan);
    return new ApiError(
      ErrorCode.PLAN_QUOTA_EXCEEDED,
      429,
      `Monthly quota of ${account.limit} screenshots for this account's keys together reached (plan ${account.plan}, revoked keys included); it resets at ${resetAt.toISOString()}`,
      { scope: 'account', used: account.used, limit: account.limit, plan: account.plan, resetAt: resetAt.toISOString() },
      retryAfter,
    );
  }

  /**
   * Publishes `quota.warning` for each threshold `status.used` has reached and no request has
   * claimed yet this month (call it after the acceptance of a {@link reservation}, with its result): the
   * insert of the (key, month, threshold) row decides who publishes. The job is already accepted
   * here, so failures are logged, never thrown; a threshold whose event could not be published is
   * unclaimed again, so the next accepted job retries it.
   */
  async warnOnThresholds(caller: AuthenticatedKey, status: QuotaStatus): Promise<void> {
    const { month } = utcMonthOf(new Date(status.resetAt.getTime() - 1));
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
