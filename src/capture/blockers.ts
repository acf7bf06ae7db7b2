import { Injectable, Logger } from '@nestjs/common';
import { FiltersEngine, Request as FilterRequest } from '@ghostery/adblocker';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { BrowserContext, Request } from 'playwright';

/** The vendored EasyList / EasyPrivacy (`vendor/filter-lists/`, refreshed by `scripts/refresh-filter-lists.sh`). */
const FILTER_LISTS_DIR = join(__dirname, '..', '..', 'vendor', 'filter-lists');

/** Which request blockers a session uses (CONTRACT.md, "Capture options": `blockAds`, `blockTrackers`, `blockCookieBanners`). */
export interface BlockerOptions {
  blockAds: boolean;
  blockTrackers: boolean;
  blockCookieBanners: boolean;
}

/** Playwright resource types in the names of the filter-list engine (Adblock Plus / webRequest types). */
const REQUEST_TYPES: Record<string, string> = {
  document: 'sub_frame',
  stylesheet: 'stylesheet',
  image: 'image',
  media: 'media',
  font: 'font',
  script: 'script',
  texttrack: 'media',
  xhr: 'xmlhttprequest',
  fetch: 'xmlhttprequest',
  eventsource: 'xmlhttprequest',
  websocket: 'websocket',
  manifest: 'other',
  ping: 'ping',
  other: 'other',
};

/**
 * The ad, tracker and consent-banner blockers of a browser session (issue 11):
 *
 * - `blockAds` / `blockTrackers`: every request of the context is matched against EasyList /
 *   EasyPrivacy with Ghostery's filter engine (`@ghostery/adblocker`, network filters); a match is
 *   aborted in the browser, so it is never made. A request the blockers let through continues as
 *   usual, through the egress proxy and its SSRF guard. The lists are vendored
 *   (`vendor/filter-lists/`) and parsed once per process, on first use (about 2 s each).
 * - `blockCookieBanners`: DuckDuckGo's autoconsent (`@duckduckgo/autoconsent`, its standalone bundle
 *   with the rules shipped in the npm package) runs in every frame from the start and opts out of, or
 *   hides, consent banners of known consent platforms and heuristically found ones. Nothing is fetched
 *   at capture time.
 */
@Injectable()
export class RequestBlockers {
  private readonly logger = new Logger(RequestBlockers.name);
  private readonly engines = new Map<'easylist' | 'easyprivacy', Promise<FiltersEngine>>();
  private autoconsentScript: string | null = null;

  /**
   * Installs the blockers `options` asks for on `context`, before its first navigation. Registers its
   * route last, so it runs before other routes of the context (Playwright runs the newest first) and
   * passes the requests it lets through on to them. Throws when a vendored list cannot be read.
   */
  async apply(context: BrowserContext, options: BlockerOptions): Promise<void> {
    if (options.blockCookieBanners) await context.addInitScript({ content: this.autoconsent() });
    const engines = await Promise.all([
      ...(options.blockAds ? [this.engine('easylist')] : []),
      ...(options.blockTrackers ? [this.engine('easyprivacy')] : []),
    ]);
    if (!engines.length) return;
    await context.route('**/*', async (route) => {
      if (engines.some((engine) => blocks(engine, route.request()))) await route.abort('blockedbyclient');
      else await route.fallback();
    });
  }

  /**
   * Waits, at most `timeoutMs`, until autoconsent in the main frame has dealt with a consent banner it
   * found, or has found none; then the capture can go on. Resolves in any case.
   */
  async settleCookieBanners(page: import('playwright').Page, timeoutMs: number): Promise<void> {
    await page
      .waitForFunction(
        () => {
          const state = (window as unknown as { autoconsentStandalone?: { messages: { type: string }[] } }).autoconsentStandalone;
          if (!state) return false;
          const types = state.messages.map((m) => m.type);
          if (types.includes('autoconsentDone') || types.includes('optOutResult') || types.includes('autoconsentError')) return true;
          // No consent platform found after detection ran its course.
          return !types.includes('cmpDetected') && !types.includes('popupFound') && performance.now() > 2000;
        },
        undefined,
        { timeout: timeoutMs, polling: 100 },
      )
      .catch(() => this.logger.debug('Consent banner handling did not settle in time; capturing as is'));
  }

  private engine(list: 'easylist' | 'easyprivacy'): Promise<FiltersEngine> {
    let engine = this.engines.get(list);
    if (!engine) {
      engine = readFile(join(FILTER_LISTS_DIR, `${list}.txt.gz`)).then((gz) => {
        const started = Date.now();
        const parsed = FiltersEngine.parse(gunzipSync(gz).toString('utf8'), { loadCosmeticFilters: false, loadNetworkFilters: true });
        this.logger.log(`Loaded ${list} (${Date.now() - started} ms)`);
        return parsed;
      });
      engine.catch(() => this.engines.delete(list));
      this.engines.set(list, engine);
    }
    return engine;
  }

  private autoconsent(): string {
    // The package exports only its entry points; the standalone bundle (rules included) sits beside them in dist/.
    this.autoconsentScript ??= readFileSync(join(dirname(require.resolve('@duckduckgo/autoconsent')), 'autoconsent.standalone.js'), 'utf8');
    return this.autoconsentScript;
  }
}

/** Whether `engine` blocks `request` (a main-frame navigation is matched as such). */
function blocks(engine: FiltersEngine, request: Request): boolean {
  const frame = request.frame();
  const isMainDocument = request.isNavigationRequest() && frame.parentFrame() === null;
  const type = isMainDocument ? 'main_frame' : (REQUEST_TYPES[request.resourceType()] ?? 'other');
  let sourceUrl = '';
  try {
    sourceUrl = isMainDocument ? request.url() : frame.url();
  } catch {
    /* detached frame: no source */
  }
  const { match } = engine.match(FilterRequest.fromRawDetails({ url: request.url(), sourceUrl, type: type as never }));
  return match;
}
