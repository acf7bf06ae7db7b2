/* What a crawl's body chooses between (CONTRACT.md, "Crawls"): shared by the entity, the DTOs and the MCP tool. */

/** Where a crawl finds pages (CONTRACT.md, "Crawls": `discover`). */
export const CRAWL_DISCOVER = ['sitemap', 'links', 'both'] as const;
export type CrawlDiscover = (typeof CRAWL_DISCOVER)[number];

/** Which pages a crawl keeps: the start URL's host only, or its registrable domain's hosts too. */
export const CRAWL_SCOPES = ['host', 'domain'] as const;
export type CrawlScope = (typeof CRAWL_SCOPES)[number];
