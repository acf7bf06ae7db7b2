/**
 * The usage at which each quota warning threshold is reached (CONTRACT.md, "Quotas"). The quota window
 * itself is the UTC calendar month: `utcMonthOf` (src/common/utc-month.ts).
 */

/** Warning thresholds, in percent of the cap (spec section 8). */
export const WARNING_THRESHOLD_PERCENTS = [80, 95] as const;
export type WarningThresholdPercent = (typeof WARNING_THRESHOLD_PERCENTS)[number];

/** The usage at which `percent` of `cap` is reached (80% of 100 → 80; 95% of 7 → 7). */
export function thresholdUsage(cap: number, percent: WarningThresholdPercent): number {
  return Math.ceil((cap * percent) / 100);
}

/** Thresholds a usage has reached for a cap; none when the cap is 0 (nothing can be used). */
export function reachedThresholds(used: number, cap: number): WarningThresholdPercent[] {
  if (cap <= 0) return [];
  return WARNING_THRESHOLD_PERCENTS.filter((p) => used >= thresholdUsage(cap, p));
}
