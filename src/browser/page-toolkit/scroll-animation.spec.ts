import { ScrollPlan, scrollPositionAt } from './scroll-animation';

/** The scroll's position over time (CONTRACT.md, "Animated captures"): delay, easing, scroll back, still end. */
describe('scrollPositionAt', () => {
  const plan: ScrollPlan = { toY: 1000, startDelayMs: 500, durationMs: 2000, easing: 'ease-in-out', scrollBack: false };

  it('stays at the top during the start delay, then eases to toY and stays there', () => {
    expect([0, 250, 500].map((t) => scrollPositionAt(plan, t))).toEqual([0, 0, 0]);
    // A half cosine: slow at both ends, half way at half time.
    expect(scrollPositionAt(plan, 500 + 200)).toBe(Math.round(1000 * ((1 - Math.cos(Math.PI * 0.1)) / 2)));
    expect(scrollPositionAt(plan, 1500)).toBe(500);
    expect([2500, 2600, 9000].map((t) => scrollPositionAt(plan, t))).toEqual([1000, 1000, 1000]);
  });

  it('linear: in proportion to the time', () => {
    const linear = { ...plan, easing: 'linear' as const };
    expect([700, 1000, 2300].map((t) => scrollPositionAt(linear, t))).toEqual([100, 250, 900]);
  });

  it('scrollBack: back to the top over durationMs again, then still at the top', () => {
    const back = { ...plan, scrollBack: true };
    expect(scrollPositionAt(back, 2500)).toBe(1000);
    expect(scrollPositionAt(back, 3500)).toBe(500);
    expect([4500, 5000].map((t) => scrollPositionAt(back, t))).toEqual([0, 0]);
  });
});
