import { Injectable } from '@nestjs/common';
import type { BrowserContext, Page } from 'playwright';
import type { ContextOptions, Lease } from '../browser/browser-pool';
import { RequestBlockers } from './blockers';
import { DEFAULT_LOCALE, SessionOptions } from './capture-options';

/**
 * Context-creation parameters of a session (Playwright's names): only those that differ from a
 * default (warm) context are set, so a capture with default options keeps a warm context (see
 * `ContextOptions` in the browser pool). Viewport in CSS px.
 */
export function sessionContextOptions(session: SessionOptions): ContextOptions {
  return {
    viewport: { width: session.width, height: session.height },
    ...(session.scale !== 1 ? { deviceScaleFactor: session.scale } : {}),
    ...(session.isMobile ? { isMobile: true } : {}),
    ...(session.hasTouch ? { hasTouch: true } : {}),
    ...(session.userAgent ? { userAgent: session.userAgent } : {}),
    ...(session.locale !== DEFAULT_LOCALE ? { locale: session.locale } : {}),
    ...(session.timezone ? { timezoneId: session.timezone } : {}),
    ...(session.darkMode ? { colorScheme: 'dark' as const } : {}),
    ...(session.reducedMotion ? { reducedMotion: 'reduce' as const } : {}),
  };
}

/**
 * Applies the session options that act on a leased context before its first navigation (CONTRACT.md,
 * "Capture options"; reused by browser session runs): `cookies` (domain defaulting to the host of
 * `targetUrl`), `headers`, which are added only to requests whose origin is the origin of `targetUrl`
 * (never to third-party subresources, iframes or cross-origin redirects), and the blockers
 * (`blockAds`, `blockTrackers`, `blockCookieBanners`, `blockResources`, `blockUrls`: {@link RequestBlockers})
 * and `geolocation` (reported by `navigator.geolocation`, the permission granted). Context-creation
 * options come from {@link sessionContextOptions} when the lease is taken.
 */
@Injectable()
export class SessionSetup {
  constructor(private readonly blockers: RequestBlockers) {}

  /** Prepares `lease.context` for `session` with `targetUrl` as the first page. Throws what Playwright throws for a cookie Chromium refuses. */
  async apply(lease: Pick<Lease, 'context'>, session: SessionOptions, targetUrl: string): Promise<void> {
    const target = new URL(targetUrl);
    if (session.cookies) {
      await lease.context.addCookies(
        session.cookies.map((c) => ({
          name: c.name,
          value: c.value,
          ...(c.domain ? { domain: c.domain, path: c.path ?? '/' } : { url: new URL(c.path ?? '/', target.origin).href }),
          ...(c.secure !== undefined ? { secure: c.secure } : {}),
          ...(c.httpOnly !== undefined ? { httpOnly: c.httpOnly } : {}),
          ...(c.sameSite ? { sameSite: c.sameSite } : {}),
        })),
      );
    }
    if (session.headers) await this.addOriginHeaders(lease.context, target.origin, session.headers);
    if (session.geolocation) {
      // Playwright's geolocation emulation (Chromium's Emulation.setGeolocationOverride), permission granted to every origin.
      await lease.context.setGeolocation(session.geolocation);
      await lease.context.grantPermissions(['geolocation']);
    }
    // Last: the blockers' route runs first and hands what it lets through to the headers route.
    await this.blockers.apply(lease.context, session);
  }

  /** After the page loaded: waits (at most `timeoutMs`) until the consent-banner blocker has dealt with the page ({@link RequestBlockers.settleCookieBanners}). */
  settleCookieBanners(page: Page, timeoutMs: number): Promise<void> {
    return this.blockers.settleCookieBanners(page, timeoutMs);
  }

  /**
   * Adds `headers` to every request of the context whose origin is `origin`. Such a request is made by
   * Playwright for the page (`route.fetch`, through the browser's egress proxy, so the SSRF guard
   * still applies) without following redirects, and its answer handed to the page: a redirect is then
   * followed by the browser as a new request, which carries the headers only if it goes to `origin`
   * again. (Continuing the request with overridden headers would repeat them on a cross-origin
   * redirect, which Playwright does not route again.)
   */
  private async addOriginHeaders(context: BrowserContext, origin: string, headers: Record<string, string>): Promise<void> {
    const extra = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    await context.route(
      (url) => url.origin === origin,
      async (route) => {
        try {
          const response = await route.fetch({ headers: { ...route.request().headers(), ...extra }, maxRedirects: 0 });
          await route.fulfill({ response });
        } catch {
          // Unreachable or refused by the egress proxy: the page sees a failed request, as without headers.
          await route.abort('failed').catch(() => undefined);
        }
      },
    );
  }
}
