import { type Core, type RequestOptions, unwrap } from '../core';
import { pollUntil, type WaitOptions } from '../poll';
import type { Crawl, CrawlPage, CrawlPageList, CrawlListPage, CreateCrawlRequest, ListCrawlsParams } from '../types';

/** A crawl that has ended: `completed`, `failed` or `canceled` (its `bundleUrl` set when the bundle was stored). */
export type FinishedCrawl = Crawl & { status: 'completed' | 'failed' | 'canceled' };

/** `/v1/crawls…`: a whole site discovered and captured, one job per page, one ZIP at the end (docs/crawls.md). */
export class Crawls {
  constructor(private readonly core: Core) {}

  /** `POST /v1/crawls`: starts a crawl (202, `pending`). Each page counts one screenshot when its job is created. */
  async create(body: CreateCrawlRequest, options?: RequestOptions): Promise<Crawl> {
    return unwrap(await this.core.api.POST('/v1/crawls', { body, ...this.core.init(options) }));
  }

  /** `GET /v1/crawls/{id}`: the crawl with its counts so far. Throws `GlimpseError` 404 `NOT_FOUND`. */
  async get(id: string, options?: RequestOptions): Promise<Crawl> {
    return unwrap(await this.core.api.GET('/v1/crawls/{id}', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `POST /v1/crawls/{id}/cancel`: stops creating jobs; the crawl ends `canceled` once its started jobs ended. */
  async cancel(id: string, options?: RequestOptions): Promise<Crawl> {
    return unwrap(await this.core.api.POST('/v1/crawls/{id}/cancel', { params: { path: { id } }, ...this.core.init(options) }));
  }

  /** `GET /v1/crawls`: one page, newest first; pass the previous page's `nextCursor` as `cursor`. */
  async listPage(params: ListCrawlsParams & { cursor?: string } = {}, options?: RequestOptions): Promise<CrawlListPage> {
    return unwrap(await this.core.api.GET('/v1/crawls', { params: { query: params }, ...this.core.init(options) }));
  }

  /** `GET /v1/crawls/{id}/pages`: one page of the crawl's pages, in discovery order. */
  async pagesPage(id: string, params: { limit?: number; cursor?: string } = {}, options?: RequestOptions): Promise<CrawlPageList> {
    return unwrap(
      await this.core.api.GET('/v1/crawls/{id}/pages', { params: { path: { id }, query: params }, ...this.core.init(options) }),
    );
  }

  /** Every page of the crawl, in discovery order, fetching page after page as you iterate. */
  async *pages(id: string, options?: RequestOptions): AsyncGenerator<CrawlPage, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.pagesPage(id, { limit: 100, ...(cursor && { cursor }) }, options);
      yield* page.data;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }

  /**
   * Polls the crawl until it ended and returns it. `onProgress` gets every polled crawl (its counts grow).
   * Throws `GlimpseTimeoutError` after `timeoutMs` (default 3,600,000: a crawl of 1,000 pages takes a while).
   */
  async waitFor(id: string, options: WaitOptions = {}): Promise<FinishedCrawl> {
    const crawl = await pollUntil(
      `crawl ${id}`,
      (signal) => this.get(id, { signal }),
      (c) => c.status === 'completed' || c.status === 'failed' || c.status === 'canceled',
      { intervalMs: 500, maxIntervalMs: 2_000, ...options, defaultTimeoutMs: 3_600_000 },
    );
    return crawl as FinishedCrawl;
  }
}
