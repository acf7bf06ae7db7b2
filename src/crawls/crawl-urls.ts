import { isIP } from 'node:net';
import { withoutBrackets } from '../common/host-brackets';
import { compileGlob, GlobMatcher } from '../common/url-glob';
import type { CrawlScope } from './crawl-options';

/**
 * A crawl URL in its one normalised form (CONTRACT.md, "Crawls": "fragment and an empty query
 * dropped, default port dropped, host lower-cased"), resolved against `base` when relative; the WHATWG
 * URL parser also decodes the host to its ASCII (punycode) form and resolves `.`/`..` path segments.
 * Null for anything a crawl cannot capture: not http(s), with a user name or password, or unparsable.
 */
export function normaliseUrl(raw: string, base?: string): string | null {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || !url.hostname) return null;
  url.hash = '';
  // An empty query ("?" alone) is dropped; WHATWG URL keeps the "?" in href unless search is set.
  if (url.search === '' || url.search === '?') url.search = '';
  return url.href;
}

/**
 * Which pages one crawl keeps (CONTRACT.md, "Crawls"): within `scope` of the start URL and its
 * `include` / `exclude` globs (the linear matcher of src/common/url-glob.ts, over the path and query;
 * no `include`: every path). Scope `host`: the start URL's host only; `domain`: that host with a
 * leading `www.` dropped and every host below it (`example.com`, `www.example.com`,
 * `docs.example.com`); an IP address start URL has only its own host either way.
 */
export class CrawlUrlRules {
  private readonly host: string;
  private readonly domain: string | null;
  private readonly include: GlobMatcher[];
  private readonly exclude: GlobMatcher[];

  constructor(startUrl: string, scope: CrawlScope, include: readonly string[], exclude: readonly string[]) {
    this.host = new URL(startUrl).hostname;
    this.domain = scope === 'domain' && !isIP(withoutBrackets(this.host)) ? this.host.replace(/^www\./, '') : null;
    this.include = include.map(compileGlob);
    this.exclude = exclude.map(compileGlob);
  }

  /** Whether the normalised URL `url` is in scope and passes `include` / `exclude`. */
  keeps(url: string): boolean {
    const parsed = new URL(url);
    const inScope =
      parsed.hostname === this.host ||
      (this.domain !== null && (parsed.hostname === this.domain || parsed.hostname.endsWith(`.${this.domain}`)));
    if (!inScope) return false;
    const path = parsed.pathname + parsed.search;
    if (this.include.length && !this.include.some((match) => match(path))) return false;
    return !this.exclude.some((match) => match(path));
  }
}
