import type { Page } from 'playwright';

/** How the scroll's position follows time: `linear`, or `ease-in-out` (a half cosine: slow at both ends, fastest in the middle). */
export type ScrollEasing = 'linear' | 'ease-in-out';

/** One scroll of the page, timed from when {@link playScroll} is called. Times in ms, positions in CSS px. */
export interface ScrollPlan {
  /** The y position the scroll ends at ({@link scrollTarget}). */
  toY: number;
  /** Still time before the scroll starts. */
  startInMs: number;
  /** Length of the scroll (and of the scroll back). */
  durationMs: number;
  easing: ScrollEasing;
  /** Scroll back to the top afterwards, over `durationMs` again. */
  scrollBack: boolean;
}

/**
 * Scrolls the page to its top (at once, whatever its `scroll-behavior`) and returns the y position, CSS px,
 * an animated scroll ends at (CONTRACT.md, "Animated captures"): `scrollTo` (`bottom`, or a y position)
 * bounded by the bottom of the page, whose height counts at most `maxPageHeight` CSS px
 * (`fullPageMaxHeight`). 0 for a page no taller than its viewport.
 */
export async function scrollTarget(page: Page, scrollTo: 'bottom' | number, maxPageHeight: number): Promise<number> {
  return page.evaluate(
    ({ scrollTo, maxPageHeight }) => {
      const root = document.scrollingElement ?? document.documentElement;
      window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
      const bottom = Math.max(0, Math.min(root.scrollHeight, maxPageHeight) - window.innerHeight);
      return Math.round(scrollTo === 'bottom' ? bottom : Math.min(scrollTo, bottom));
    },
    { scrollTo, maxPageHeight },
  );
}

/**
 * Plays `plan` in the page, on its animation frames (`requestAnimationFrame`, timed with
 * `performance.now()`, so the position at each painted frame is the plan's at that time): still until
 * `startInMs`, then from the top to `toY` over `durationMs` with the easing, and back with `scrollBack`.
 * Each position is set at once (`behavior: "instant"`), so the page's own smooth scrolling does not lag
 * it. Resolves when the scroll is over; rejects when the page goes away meanwhile.
 */
export async function playScroll(page: Page, plan: ScrollPlan): Promise<void> {
  await page.evaluate(
    (plan) =>
      new Promise<void>((resolve) => {
        const ease = (t: number) => (plan.easing === 'linear' ? t : (1 - Math.cos(Math.PI * t)) / 2);
        const legs = plan.scrollBack ? 2 : 1;
        const origin = performance.now();
        const at = (y: number) => window.scrollTo({ top: y, left: 0, behavior: 'instant' });
        const frame = (now: number) => {
          const t = (now - origin - plan.startInMs) / plan.durationMs;
          if (t >= legs) {
            at(plan.scrollBack ? 0 : plan.toY);
            resolve();
            return;
          }
          if (t > 0) at(plan.toY * (t <= 1 ? ease(t) : 1 - ease(t - 1)));
          requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      }),
    plan,
  );
}
