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
 * The monthly screenshot ceiling of an account on `plan`: its keys together, revoked ones included, accept
 * at most the per-key cap × the plan's active-key limit (CONTRACT.md, "Quotas"; free 100 × 2 = 200,
 * starter 2,000 × 10, pro 10,000 × 50; `legacy_free` its configured cap × the free plan's 2 keys). The one
 * place the ceiling rule lives. At most {@link MAX_USAGE_COUNT}, the largest count a usage row holds.
 */
export function accountMonthlyCeiling(plan: Plan, legacyFreeCap: number): number {
  return Math.min(MAX_USAGE_COUNT, monthlyCap(plan, legacyFreeCap) * planLimit(plan, 'api_keys'));
}

/** The largest screenshot count a usage row holds (a PostgreSQL `integer`). */
export const MAX_USAGE_COUNT = 2_147_483_647;

/** What a plan limits the number of (CONTRACT.md, "Organizations and plan limits"); the `resource` of `PLAN_LIMIT_REACHED`. */
export const LIMITED_RESOURCES = [
  'api_keys',
  'webhook_endpoints',
  'render_keys',
  'monitors',
  'storage_destinations',
  'profiles',
  'running_crawls',
  'crawl_pages',
] as const;
export type LimitedResource = (typeof LIMITED_RESOURCES)[number];

/**
 * How many of each resource an account may have per plan (CONTRACT.md, "Organizations and plan
 * limits"): active (unrevoked) API keys, webhook endpoints, render keys, monitors, storage
 * destinations, browser profiles. `legacy_free` has the `free` limits. The one place these numbers live.
 */
export const PLAN_LIMITS: Record<LimitedResource, Record<Exclude<Plan, 'legacy_free'>, number>> = {
  api_keys: { free: 2, starter: 10, pro: 50 },
  webhook_endpoints: { free: 2, starter: 10, pro: 50 },
  render_keys: { free: 2, starter: 10, pro: 50 },
  monitors: { free: 3, starter: 50, pro: 500 },
  storage_destinations: { free: 1, starter: 5, pro: 20 },
  profiles: { free: 2, starter: 10, pro: 50 },
  /** Crawls `pending` or `running` at once (CONTRACT.md, "Crawls"). */
  running_crawls: { free: 1, starter: 3, pro: 10 },
  /** The largest `maxPages` of one crawl (CONTRACT.md, "Crawls"). */
  crawl_pages: { free: 20, starter: 200, pro: 1000 },
};

/** How many of `resource` an account on `plan` may have. */
export function planLimit(plan: Plan, resource: LimitedResource): number {
  return PLAN_LIMITS[resource][plan === 'legacy_free' ? 'free' : plan];
}
