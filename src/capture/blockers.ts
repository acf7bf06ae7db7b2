import { Injectable, Logger } from '@nestjs/common';
import { FiltersEngine, Request as FilterRequest } from '@ghostery/adblocker';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { BrowserContext, Request } from 'playwright';
import { compileGlob } from '../common/url-glob';

/** The vendored EasyList / EasyPrivacy (`vendor/filter-lists/`, refreshed by `scripts/refresh-filter-lists.sh`). */
const FILTER_LISTS_DIR = join(__dirname, '..', '..', 'vendor', 'filter-lists');

/**
 * Which request blockers a session uses (CONTRACT.md, "Capture options": `blockAds`, `blockTrackers`,
 * `blockCookieBanners`; "Capture options, second set": `blockResources`, `blockUrls`). The last two
 * may be absent on runs stored before they existed.
 */
export interface BlockerOptions {
  blockAds: boolean;
  blockTrackers: boolean;
  blockCookieBanners: boolean;
  /** Playwright resource types whose requests are not made. */
  blockResources?: readonly string[] | null;
  /** Glob patterns (`*` = any characters) over the whole URL of requests that are not made. */
  blockUrls?: readonly string[] | null;
}

/**
 * Whether a request URL is blocked by `blockUrls` (CONTRACT.md, "Capture options, second set"; "Tenancy:
 * fair share and isolation"): true when the whole URL matches one of the globs (`*` any characters,
 * everything else itself; {@link compileGlob}). Each glob is compiled once; matching a URL takes time
 * linear in its length for each glob (at most 50 globs of at most 512 characters), whatever they are,
 * so a page's requests never hold the worker's event loop.
 */
export function blockUrlsMatcher(blockUrls: readonly string[]): (url: string) => boolean {
  const globs = blockUrls.map(compileGlob);
  return (url) => globs.some((matches) => matches(url));
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
 * The request blockers of a browser session (docs/capture-options.md, "Blockers" and "Second set"):
 *
 * - `blockResources` / `blockUrls`: a request of a listed Playwright resource type, or whose URL
 *   matches one of the globs ({@link blockUrlsMatcher}), is aborted in the browser, so it is never made;
 *   a matching WebSocket is closed before it connects (`routeWebSocket`).
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
    const types = new Set(options.blockResources ?? []);
    const globs = options.blockUrls ?? [];
    const urlBlocked = blockUrlsMatcher(globs);
    if (types.has('websocket') || globs.length) {
      // WebSockets are not seen by `route`: a matching one is answered by nobody and closed, so it never reaches its server.
      await context.routeWebSocket(
        (url) => types.has('websocket') || urlBlocked(url.href),
        (ws) => ws.close({ code: 1008, reason: 'blocked' }),
      );
    }
    if (!engines.length && !types.size && !globs.length) return;
    await context.route('**/*', async (route) => {
      const request = route.request();
      if (types.has(request.resourceType()) || urlBlocked(request.url()) || engines.some((engine) => blocks(engine, request)))
        await route.abort('blockedbyclient');
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

/** Whether `request` is a main-frame navigation. */
function isMainDocument(request: Request): boolean {
  return request.isNavigationRequest() && request.frame().parentFrame() === null;
}

/** Whether `engine` blocks `request` (a main-frame navigation is matched as such). */
function blocks(engine: FiltersEngine, request: Request): boolean {
  const frame = request.frame();
  const mainDocument = isMainDocument(request);
  const type = mainDocument ? 'main_frame' : (REQUEST_TYPES[request.resourceType()] ?? 'other');
  let sourceUrl = '';
  try {
    sourceUrl = mainDocument ? request.url() : frame.url();
  } catch {
    /* detached frame: no source */
  }
  const { match } = engine.match(FilterRequest.fromRawDetails({ url: request.url(), sourceUrl, type: type as never }));
  return match;
}
