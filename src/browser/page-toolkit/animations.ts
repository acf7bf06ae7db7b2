import type { Page } from 'playwright';

/**
 * Stops the page's CSS animations and transitions (and Web Animations) as Playwright's screenshot
 * option `animations: "disabled"` does (CONTRACT.md, "Capture options, second set": `disableAnimations`):
 * a finite one is finished (its end state shows), an infinite one is cancelled (the element shows its
 * un-animated style). Acts on every frame of `page` through `Document.getAnimations()`; a frame that
 * went away meanwhile is skipped. Returns how many animations were settled. Call it right before the
 * capture: animations started later are not affected.
 */
export async function settleAnimations(page: Page): Promise<number> {
  const counts = await Promise.all(
    page.frames().map((frame) =>
      frame
        .evaluate(() => {
          let settled = 0;
          for (const animation of document.getAnimations()) {
            const end = animation.effect?.getComputedTiming().endTime;
            if (typeof end === 'number' && Number.isFinite(end)) animation.finish();
            else animation.cancel();
            settled++;
          }
          return settled;
        })
        .catch(() => 0),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}
