import { Injectable, Logger } from '@nestjs/common';
import { XMLParser } from 'fast-xml-parser';
import robotsParser from 'robots-parser';
import { Agent, request } from 'undici';
import { gunzipSync } from 'node:zlib';
import { readAtMost } from '../egress/customer-endpoints';
import { SsrfGuard } from '../egress/ssrf-guard';
import { guardedLookup } from '../storage-destinations/guarded-lookup';
import { normaliseUrl } from './crawl-urls';

/** The user agent whose robots.txt rules a crawl follows (CONTRACT.md, "Crawls"). */
export const CRAWL_USER_AGENT = 'Glimpse';

/** Largest robots.txt read, bytes (Google reads 500 KiB). */
export const ROBOTS_MAX_BYTES = 512 * 1024;

/** Largest sitemap read, bytes, compressed or not, and largest once gunzipped (the sitemaps protocol allows 50 MB; 10 MiB here). */
export const SITEMAP_MAX_BYTES = 10 * 1024 * 1024;

/** Most sitemap files read per crawl (indexes and their sitemaps together). */
export const SITEMAP_MAX_FILES = 50;

/** Longest one fetch of robots.txt or a sitemap may take, body included, ms. */
export const DISCOVERY_FETCH_TIMEOUT_MS = 15_000;

/** Redirects followed per fetch (each one's host checked by the SSRF guard). */
const MAX_REDIRECTS = 5;

/** A site's robots.txt as a crawl reads it. */
export interface SiteRobots {
  /** Whether user agent `Glimpse` may fetch `url` (always true without a robots.txt). */
  allows(url: string): boolean;
  /** Its `Sitemap:` lines. */
  sitemaps: string[];
}

/** What one fetch answered: the body (at most the cap), or null for anything but a 2xx within the cap. */
type Fetched = Buffer | null;

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * The five predefined XML entities and character references of a text node. The parser runs with
 * entity processing off (no DOCTYPE entity is ever expanded: no "billion laughs"), so sitemap text
 * keeps `&amp;` as written; only these fixed replacements are made, never a declared entity.
 */
function decodeXmlText(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (whole, name: string) => {
    if (name[0] !== '#') return XML_ENTITIES[name];
    const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/** The `<loc>` texts of the `<url>` (urlset) and `<sitemap>` (index) entries of a sitemap document. */
export function parseSitemap(xml: string): { pages: string[]; sitemaps: string[] } {
  const parser = new XMLParser({
    processEntities: false,
    ignoreAttributes: true,
    ignoreDeclaration: true,
    removeNSPrefix: true,
    isArray: (name) => name === 'url' || name === 'sitemap',
  });
  const doc = parser.parse(xml) as { urlset?: { url?: { loc?: unknown }[] }; sitemapindex?: { sitemap?: { loc?: unknown }[] } };
  const locs = (entries: { loc?: unknown }[] | undefined) =>
    (entries ?? []).flatMap((entry) => (typeof entry?.loc === 'string' ? [decodeXmlText(entry.loc.trim())] : []));
  return { pages: locs(doc?.urlset?.url), sitemaps: locs(doc?.sitemapindex?.sitemap) };
}

/**
 * Reads what a site says about itself for a crawl (CONTRACT.md, "Crawls"): its `robots.txt` (the
 * rules for user agent {@link CRAWL_USER_AGENT}, read with `robots-parser`, and its `Sitemap:` lines)
 * and its sitemaps (`/sitemap.xml` and those robots.txt names; indexes followed; gzip accepted), parsed
 * with `fast-xml-parser` with entity processing off. Every fetch goes through the SSRF guard like a
 * capture (`guardedLookup`: each host resolved once and checked, the connection made to the checked
 * address; redirects followed by hand, each checked again), reads at most {@link ROBOTS_MAX_BYTES} /
 * {@link SITEMAP_MAX_BYTES} ({@link readAtMost}) within {@link DISCOVERY_FETCH_TIMEOUT_MS}. A robots.txt
 * or sitemap that cannot be read is as if absent; nothing here throws for what a site answers.
 */
@Injectable()
export class SiteDiscovery {
  private readonly logger = new Logger(SiteDiscovery.name);

  constructor(private readonly guard: SsrfGuard) {}

  /** The robots.txt of `startUrl`'s origin; one that cannot be read allows everything. */
  async robots(startUrl: string): Promise<SiteRobots> {
    const robotsUrl = new URL('/robots.txt', startUrl).href;
    const body = await this.fetch(robotsUrl, ROBOTS_MAX_BYTES);
    const parsed = robotsParser(robotsUrl, body ? body.toString('utf8') : '');
    return {
      allows: (url) => parsed.isAllowed(url, CRAWL_USER_AGENT) !== false,
      sitemaps: parsed.getSitemaps(),
    };
  }

  /**
   * The page URLs (normalised; not yet filtered by scope) of the sitemaps `roots` and the sitemaps
   * their indexes name, breadth first, at most {@link SITEMAP_MAX_FILES} files, each URL once.
   */
  async sitemapPages(roots: string[]): Promise<string[]> {
    const queue = [...new Set(roots.map((r) => normaliseUrl(r)).filter((r): r is string => r !== null))];
    const seen = new Set(queue);
    const pages = new Set<string>();
    for (let read = 0; queue.length && read < SITEMAP_MAX_FILES; read++) {
      const sitemapUrl = queue.shift()!;
      const body = await this.fetch(sitemapUrl, SITEMAP_MAX_BYTES);
      if (!body) continue;
      let found: { pages: string[]; sitemaps: string[] };
      try {
        found = parseSitemap(gunzipIfCompressed(body).toString('utf8'));
      } catch (err) {
        this.logger.debug(`Sitemap ${sitemapUrl} unreadable: ${(err as Error).message}`);
        continue;
      }
      for (const page of found.pages) {
        const url = normaliseUrl(page, sitemapUrl);
        if (url) pages.add(url);
      }
      for (const child of found.sitemaps) {
        const url = normaliseUrl(child, sitemapUrl);
        if (url && !seen.has(url)) {
          seen.add(url);
          queue.push(url);
        }
      }
    }
    return [...pages];
  }

  /** The body of a 2xx answer to a GET of `url` (redirects followed), at most `maxBytes`; null otherwise. */
  private async fetch(url: string, maxBytes: number): Promise<Fetched> {
    const agent = new Agent({ connect: { lookup: guardedLookup(this.guard) } });
    const signal = AbortSignal.timeout(DISCOVERY_FETCH_TIMEOUT_MS);
    try {
      let target = url;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        // An IP literal never reaches the lookup: the guard checks every URL before it is dialled.
        await this.guard.assertAllowed(target);
        const res = await request(target, {
          method: 'GET',
          dispatcher: agent,
          signal,
          headers: { 'user-agent': `${CRAWL_USER_AGENT}/1`, 'accept-encoding': 'identity' },
        });
        const location = res.headers.location;
        if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string') {
          res.body.on('error', () => undefined);
          res.body.destroy();
          const next = normaliseUrl(location, target);
          if (!next) return null;
          target = next;
          continue;
        }
        const { bytes, overflowed } = await readAtMost(res.body, maxBytes, signal);
        return res.statusCode >= 200 && res.statusCode < 300 && !overflowed ? bytes : null;
      }
      return null;
    } catch (err) {
      this.logger.debug(`Discovery fetch of ${url} failed: ${(err as Error).message}`);
      return null;
    } finally {
      await agent.destroy().catch(() => undefined);
    }
  }
}

/** `body` gunzipped when it starts with the gzip magic bytes (a `.xml.gz` sitemap), at most {@link SITEMAP_MAX_BYTES} out; else as it is. */
function gunzipIfCompressed(body: Buffer): Buffer {
  if (body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b) return body;
  return gunzipSync(body, { maxOutputLength: SITEMAP_MAX_BYTES });
}
