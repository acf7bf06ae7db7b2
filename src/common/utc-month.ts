/**
 * Calendar arithmetic in UTC: the calendar month and day a moment falls in, and whole seconds to a
 * moment. Generic date math (no plans, no caps); quotas count per UTC calendar month with it
 * (CONTRACT.md, "Quotas"; the warning thresholds are in src/quota/quota-window.ts).
 */

/** One calendar month (UTC). */
export interface UtcMonth {
  /** The month's first day, `YYYY-MM-01` (the key of a monthly usage row). */
  month: string;
  /** 00:00:00.000 UTC on the 1st of the next month, when the month ends. */
  resetAt: Date;
}

/** The UTC calendar month `now` falls in; the local time zone plays no part. */
export function utcMonthOf(now: Date): UtcMonth {
  const year = now.getUTCFullYear();
  const monthIndex = now.getUTCMonth();
  return {
    month: `${String(year).padStart(4, '0')}-${String(monthIndex + 1).padStart(2, '0')}-01`,
    resetAt: new Date(Date.UTC(year, monthIndex + 1, 1)),
  };
}

/** The UTC day `now` falls in, `YYYY-MM-DD` (the key of a per-day usage row). */
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
