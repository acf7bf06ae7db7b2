import { TimeBudget, TimeLimitExceededError, withTimeLimit } from './time-budget';

describe('TimeBudget (the arithmetic of waits inside a budget)', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('gives each wait the smaller of its own limit and what is left, never less than 1 ms', () => {
    now = 1_000_000;
    const budget = new TimeBudget(2_000, clock);
    expect(budget.deadline).toBe(1_002_000);
    expect(budget.limit(30_000)).toBe(2_000);
    expect(budget.limit(500)).toBe(500);
    now += 1_800;
    expect(budget.elapsedMs()).toBe(1_800);
    expect(budget.remainingMs()).toBe(200);
    expect(budget.limit(500)).toBe(200);
    now += 1_000;
    expect(budget.remainingMs()).toBe(0);
    // Playwright reads 0 as "no limit": a spent budget still gives 1 ms.
    expect(budget.limit(500)).toBe(1);
  });

  it('tells a wait the budget cut short from one that ran out on its own', () => {
    now = 0;
    const budget = new TimeBudget(1_000, clock);
    now = 400;
    const cut = budget.limit(5_000);
    expect(cut).toBe(600);
    now = 997; // the timer fired a little early: within the 5 ms slack
    expect(budget.cutShort(5_000, cut)).toBe(true);
    now = 400;
    const own = budget.limit(300);
    now = 700;
    expect(budget.cutShort(300, own)).toBe(false);
    now = 600;
    expect(budget.cutShort(5_000, cut)).toBe(false); // cut, but not spent yet: the wait failed on its own
  });
});

describe('withTimeLimit', () => {
  it('passes the result or the failure of work that ends in time', async () => {
    await expect(withTimeLimit(Promise.resolve(7), 1_000)).resolves.toBe(7);
    await expect(withTimeLimit(Promise.reject(new Error('boom')), 1_000)).rejects.toThrow('boom');
  });

  it('fails with the limit once it passes', async () => {
    const never = new Promise<never>(() => undefined);
    const err = await withTimeLimit(never, 5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeLimitExceededError);
    expect((err as TimeLimitExceededError).message).toBe('did not finish within 5 ms');
  });
});
