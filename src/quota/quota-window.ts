/**
 * Pure quota arithmetic (CONTRACT.md, "Quotas"): the calendar month (UTC) a moment falls in, when it
 * resets, and the usage at which each warning threshold is reached.
 */

/** Warning thresholds, in percent of the cap (spec section 8). */
export const WARNING_THRESHOLD_PERCENTS = [80, 95] as const;
export type WarningThresholdPercent = (typeof WARNING_THRESHOLD_PERCENTS)[number];

/** One calendar month (UTC) of usage. */
export interface QuotaMonth {
  /** The month's first day, `YYYY-MM-01`: the key of its usage row. */
  month: string;
  /** 00:00:00.000 UTC on the 1st of the next month, when usage starts again from 0. */
  resetAt: Date;
}

/** The quota month `now` falls in. */
export function quotaMonthOf(now: Date): QuotaMonth {
  const year = now.getUTCFullYear();
  const monthIndex = now.getUTCMonth();
  return {
    month: `${String(year).padStart(4, '0')}-${String(monthIndex + 1).padStart(2, '0')}-01`,
    resetAt: new Date(Date.UTC(year, monthIndex + 1, 1)),
  };
}

/** The UTC day `now` falls in, `YYYY-MM-DD`: the key of its per-day usage row. */
export function utcDayOf(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Whole seconds from `now` until `resetAt`, rounded up, at least 1 (`Retry-After`, `X-RateLimit-Reset` math). */
export function secondsUntil(resetAt: Date, now: Date): number {
  return Math.max(1, Math.ceil((resetAt.getTime() - now.getTime()) / 1000));
}

/** Unix seconds of a moment that falls on a whole second (a reset time). */
export function unixSeconds(at: Date): number {
  return Math.floor(at.getTime() / 1000);
}

/** The usage at which `percent` of `cap` is reached (80% of 100 → 80; 95% of 7 → 7). */
export function thresholdUsage(cap: number, percent: WarningThresholdPercent): number {
  return Math.ceil((cap * percent) / 100);
}

/** Thresholds a usage has reached for a cap; none when the cap is 0 (nothing can be used). */
export function reachedThresholds(used: number, cap: number): WarningThresholdPercent[] {
  if (cap <= 0) return [];
  return WARNING_THRESHOLD_PERCENTS.filter((p) => used >= thresholdUsage(cap, p));
}
