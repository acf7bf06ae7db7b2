import type { Page } from 'playwright';

/** How the scroll's position follows time: `linear`, or `ease-in-out` (a half cosine: slow at both ends, fastest in the middle). */
export type ScrollEasing = 'linear' | 'ease-in-out';

/** One scroll of the page, timed from the start of the recording. Times in ms, positions in CSS px. */
export interface ScrollPlan {
  /** The y position the scroll ends at ({@link scrollTarget}). */
  toY: number;
  /** Still time before the scroll starts. */
  startDelayMs: number;
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
 * The y position, whole CSS px, of `plan` at `timeMs` after its start (CONTRACT.md, "Animated captures";
 * docs/animated-captures.md, "How it is recorded"): 0 until `startDelayMs`, then from the top to `toY`
 * over `durationMs` with the easing, back to 0 over `durationMs` again with `scrollBack`, then still
 * (at `toY`, or 0 with `scrollBack`). The one place of the scroll's maths.
 */
export function scrollPositionAt(plan: ScrollPlan, timeMs: number): number {
  const ease = (t: number) => (plan.easing === 'linear' ? t : (1 - Math.cos(Math.PI * t)) / 2);
  const t = (timeMs - plan.startDelayMs) / plan.durationMs;
  if (t <= 0) return 0;
  if (t >= (plan.scrollBack ? 2 : 1)) return plan.scrollBack ? 0 : plan.toY;
  return Math.round(plan.toY * (t <= 1 ? ease(t) : 1 - ease(t - 1)));
}

/**
 * Scrolls the page's document to `y` (CSS px) at once (`behavior: "instant"`, so the page's own smooth
 * scrolling does not lag it) and returns the y position it reached, CSS px (less than `y` when the
 * page got shorter). Rejects when the page goes away meanwhile.
 */
export function scrollToY(page: Page, y: number): Promise<number> {
  return page.evaluate((top) => {
    window.scrollTo({ top, left: 0, behavior: 'instant' });
    return window.scrollY;
  }, y);
}
