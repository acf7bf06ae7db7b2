/** Plans and their monthly screenshot caps (spec section 8; `legacy_free` per CONTRACT.md, "Quotas"). */
export const PLANS = ['free', 'starter', 'pro', 'legacy_free'] as const;
export type Plan = (typeof PLANS)[number];

/** Fixed monthly caps; `legacy_free` takes its cap from `LEGACY_FREE_CAP`. */
export const PLAN_CAPS: Record<Exclude<Plan, 'legacy_free'>, number> = { free: 100, starter: 2000, pro: 10000 };

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/** The monthly screenshot cap of a plan, per API key: the one place the cap rule lives. */
export function monthlyCap(plan: Plan, legacyFreeCap: number): number {
  return plan === 'legacy_free' ? legacyFreeCap : PLAN_CAPS[plan];
}

/**
 * Render keys an account may have per plan (CONTRACT.md, "Organizations and plan limits": 2 / 10 / 50);
 * `legacy_free` has the free plan's. Kept here beside the caps until a table of every plan limit exists.
 */
export const PLAN_RENDER_KEY_LIMITS: Record<Plan, number> = { free: 2, starter: 10, pro: 50, legacy_free: 2 };
