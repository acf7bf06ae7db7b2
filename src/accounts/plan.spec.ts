import { accountMonthlyCeiling, MAX_USAGE_COUNT, monthlyCap, PLANS } from './plan';

describe('account monthly ceiling (CONTRACT.md, "Quotas")', () => {
  it('is the cap per key × the active-key limit of the plan; legacy_free: its configured cap × the free key limit', () => {
    expect(Object.fromEntries(PLANS.map((plan) => [plan, accountMonthlyCeiling(plan, 1000)]))).toEqual({
      free: 200,
      starter: 20_000,
      pro: 500_000,
      legacy_free: 2000,
    });
    expect(accountMonthlyCeiling('legacy_free', 7)).toBe(14);
    for (const plan of PLANS) expect(accountMonthlyCeiling(plan, 7)).toBeGreaterThanOrEqual(2 * monthlyCap(plan, 7));
    // A very large LEGACY_FREE_CAP: the ceiling stays a count a usage row (and its SQL parameter) can hold.
    expect(accountMonthlyCeiling('legacy_free', 2_000_000_000)).toBe(MAX_USAGE_COUNT);
  });
});
