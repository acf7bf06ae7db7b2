import AxeBuilder from '@axe-core/playwright';
import { Browser, chromium, Page } from 'playwright';
import { resolveChromiumExecutable } from '../../src/browser/chromium-executable';
import { AppConfig } from '../../src/config/app-config';

/**
 * A browser for a test to drive itself (the dashboard's pages, the run steps, a render link in an
 * `<img>`): the capture browser the app itself would launch (`CHROMIUM_PATH`, else the first of
 * src/browser/chromium-executable.ts's candidates, Debian's `chromium-headless-shell`), headless,
 * without the sandbox or GPU. For the dashboard it renders with the same Blink as full Chromium, at a
 * third less CPU for the 19 audits (docs/testing.md, "Why the runner is as it is").
 */
export function launchTestBrowser(config: Pick<AppConfig, 'chromiumPath'>): Promise<Browser> {
  return chromium.launch({
    executablePath: resolveChromiumExecutable(config.chromiumPath),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
}

/**
 * Axe's serious and critical violations on `page` as it is, one line each: `rule: help (targets)`;
 * empty when there are none. Only violations are gathered in full (`resultTypes`): axe still runs every
 * rule, but skips building selectors for every passing and inapplicable node, which the tests never read.
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).options({ resultTypes: ['violations'] }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}
