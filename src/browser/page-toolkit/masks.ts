import type { Page } from 'playwright';

/** What {@link addPageStyles} applies. */
export interface PageStyles {
  /** Elements to hide (`visibility: hidden`, so the layout does not move). */
  hideSelectors?: string[] | null;
  /** A style sheet of the customer's. */
  css?: string | null;
}

/**
 * Adds one constructed style sheet (not subject to the page's Content-Security-Policy) hiding
 * `hideSelectors` and holding `css` (CONTRACT.md, "Capture options": `hideSelectors`, `css`). Returns
 * null, or the customer-safe reason it could not (`css could not be applied: …`, `invalid selector in
 * hideSelectors: …`); nothing is applied then.
 */
export function addPageStyles(page: Page, styles: PageStyles): Promise<string | null> {
  return page.evaluate(
    ({ hide, css }) => {
      const sheet = new CSSStyleSheet();
      try {
        sheet.replaceSync(css ?? '');
      } catch (err) {
        return `css could not be applied: ${(err as Error).message}`;
      }
      for (const selector of hide ?? []) {
        try {
          document.querySelector(selector);
        } catch {
          return `invalid selector in hideSelectors: ${selector}`;
        }
        sheet.insertRule(`${selector} { visibility: hidden !important; }`, sheet.cssRules.length);
      }
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
      return null;
    },
    { hide: styles.hideSelectors ?? null, css: styles.css ?? null },
  );
}

/** Attribute marking the overlays {@link maskElements} adds. */
export const MASK_ATTRIBUTE = 'data-glimpse-mask';

/**
 * Covers every element matching one of `selectors` with a box of `color` (any CSS colour), drawn
 * above the page at the element's page-coordinate box, as Playwright's own screenshot `mask` does;
 * the page's layout does not change. Elements not rendered get no box. Returns the number of boxes
 * drawn, or the customer-safe reason it could not (`invalid selector in mask: …`); nothing is drawn
 * then. Call it right before the screenshot: the boxes do not follow elements that move later.
 */
export function maskElements(page: Page, selectors: string[], color: string): Promise<number | string> {
  return page.evaluate(
    ({ selectors, color, attribute }) => {
      const elements: Element[] = [];
      for (const selector of selectors) {
        try {
          elements.push(...Array.from(document.querySelectorAll(selector)));
        } catch {
          return `invalid selector in mask: ${selector}`;
        }
      }
      let drawn = 0;
      for (const el of new Set(elements)) {
        const r = el.getBoundingClientRect();
        if (r.width <= 0 || r.height <= 0) continue;
        const box = document.createElement('div');
        box.setAttribute(attribute, '');
        box.style.cssText = [
          'position: absolute',
          `left: ${r.left + window.scrollX}px`,
          `top: ${r.top + window.scrollY}px`,
          `width: ${r.width}px`,
          `height: ${r.height}px`,
          'margin: 0',
          'padding: 0',
          'border: 0',
          'pointer-events: none',
          'z-index: 2147483647',
        ]
          .map((d) => `${d} !important`)
          .join('; ');
        box.style.setProperty('background', color, 'important');
        document.documentElement.appendChild(box);
        drawn++;
      }
      return drawn;
    },
    { selectors, color, attribute: MASK_ATTRIBUTE },
  );
}
