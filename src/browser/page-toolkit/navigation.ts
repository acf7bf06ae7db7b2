import type { Page, Request, Response } from 'playwright';
import { EgressFailureLookup, egressRefusal, proxyFailureFor } from './egress-failures';
import { classifyPlaywrightError, PAGE_MESSAGES, PageFailure } from './playwright-errors';
import { TimeBudget } from './time-budget';

/** Options of {@link navigate}. Times in ms. */
export interface NavigateOptions {
  /** The milestone to wait for (Playwright's names; CONTRACT.md, "Capture options", `waitUntil`). */
  waitUntil: 'load' | 'domcontentloaded' | 'networkidle';
  /** Limit of the whole navigation: the response and then the milestone share it. */
  timeoutMs: number;
  /**
   * When the page answered but did not reach `waitUntil` in time: keep it if it has a body (true: a
   * capture shows what rendered) or fail with "navigation timed out" (false, the default).
   */
  acceptRendered?: boolean;
  /** Where the egress proxy's reasons are looked up (an https target it refused). */
  egress?: EgressFailureLookup;
}

/** A navigation that succeeded. */
export interface Navigation {
  /** The main document's response (null for a same-document navigation). */
  response: Response | null;
  /** False when `waitUntil` was not reached in time and what rendered was kept (`acceptRendered`). */
  reachedWaitUntil: boolean;
}

/**
 * Loads `url` in `page` within `timeoutMs`: first until the response commits, then, with what is
 * left of the limit, until `waitUntil`. Every request goes through the egress proxy (ARCHITECTURE.md,
 * egress/). Throws {@link PageFailure} with a customer-safe message:
 * - `navigation timed out after <timeoutMs> ms` when either wait ran out (and, for the second one,
 *   nothing rendered or `acceptRendered` is false);
 * - the egress proxy's reason when it refused the target ("Target not allowed: …": from its answer to a
 *   plain-http request, or its record of a refused https tunnel, looked up for the URL that failed,
 *   which is the redirect's target after a redirect);
 * - Chromium's `net::ERR_…` name for any other network failure.
 * Any other error (the page closed, the browser crashed) is rethrown as is: its words are the caller's.
 */
export async function navigate(page: Page, url: string, options: NavigateOptions): Promise<Navigation> {
  const budget = new TimeBudget(options.timeoutMs);
  let failedUrl: string | null = null;
  const onFailed = (request: Request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) failedUrl = request.url();
  };
  page.on('requestfailed', onFailed);
  let response: Response | null;
  try {
    response = await page.goto(url, { waitUntil: 'commit', timeout: options.timeoutMs });
  } catch (err) {
    const { kind, netError } = classifyPlaywrightError(err);
    if (kind === 'timeout') throw new PageFailure(PAGE_MESSAGES.navigationTimedOut(options.timeoutMs));
    if (kind === 'network' && netError) throw new PageFailure(proxyFailureFor(options.egress, failedUrl ?? url, netError) ?? netError);
    throw err;
  } finally {
    page.off('requestfailed', onFailed);
  }
  const refusal = egressRefusal(response);
  if (refusal) throw new PageFailure(refusal);
  try {
    await page.waitForLoadState(options.waitUntil, { timeout: budget.limit(options.timeoutMs) });
    return { response, reachedWaitUntil: true };
  } catch (err) {
    if (classifyPlaywrightError(err).kind !== 'timeout') throw err;
    const rendered = options.acceptRendered && (await page.evaluate(() => document.body !== null).catch(() => false));
    if (!rendered) throw new PageFailure(PAGE_MESSAGES.navigationTimedOut(options.timeoutMs));
    return { response, reachedWaitUntil: false };
  }
}
