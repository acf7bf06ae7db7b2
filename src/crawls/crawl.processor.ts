import { InjectQueue } from '@nestjs/bull';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { ApiKeysService, AuthenticatedKey } from '../auth/api-keys.service';
import type { CaptureOptionsInput } from '../capture/capture-options';
import { ApiError, ErrorCode } from '../common/api-error';
import { SsrfGuard } from '../egress/ssrf-guard';
import { EventsService } from '../events/events.service';
import { PeriodicJob, WorkProcessor } from '../queue/queue-processor';
import { Clock } from '../common/clock';
import { CRAWL_JOB, CRAWL_QUEUE, CrawlPayload } from '../queue/queues';
import { EXTRACT_LINKS_MAX, ExtractKind } from '../results/extracted';
import { CrawlPageResult, ScreenshotsService } from '../screenshots/screenshots.service';
import { ResultFilesService } from '../storage/result-files.service';
import { BundledPage, CrawlBundle } from './crawl-bundle';
import { CrawlEnding, CrawlLifecycle } from './crawl-lifecycle';
import { CrawlPages, CrawlProgress } from './crawl-pages';
import { CrawlUrlRules, normaliseUrl } from './crawl-urls';
import { Crawl, CrawlStoppedReason } from './crawl.entity';
import { SiteDiscovery, SiteRobots } from './site-discovery';
import { WakeableWaits } from '../common/wakeable-waits';

/** Crawls one process drives at once (each mostly waits for its pages' jobs). */
export const CRAWL_DRIVERS_PER_PROCESS = 20;

/** Longest a driver waits before looking at its crawl again, ms (a page's job ending in this process wakes it at once). */
export const CRAWL_TICK_MS = 500;

/** Bull job name of the crawls' sweep (deletes expired bundles). */
export const CRAWL_SWEEP_JOB = 'crawl-sweep';

/** How often the sweep runs, ms. */
export const CRAWL_SWEEP_INTERVAL_MS = 10 * 60_000;

/** Bundles deleted per sweep. */
const PURGE_BATCH = 200;

/** Pages accepted per transaction, and ended pages whose links are read per round. */
const PAGE_BATCH = 25;

/** Largest links file read, bytes (5,000 links of at most about 3 KiB each). */
const LINKS_MAX_BYTES = EXTRACT_LINKS_MAX * 3 * 1024;

/** The customer-safe `error` of the jobs a cancel ends (CONTRACT.md, "Crawls": cancel). */
export const CRAWL_CANCELED_MESSAGE = 'the crawl was canceled before this page was captured';

const NO_PROGRESS: CrawlProgress = { pagesFound: 0, pagesQueued: 0, pagesDone: 0, pagesFailed: 0, unqueued: 0, open: 0, unharvested: 0 };

/**
 * Drives crawls (CONTRACT.md, "Crawls"; docs/crawls.md), a {@link WorkProcessor} of the `crawls` queue:
 * one queue job per crawl, held while the crawl runs. **Claim**: `pending` → `running` ({@link CrawlLifecycle});
 * a `running` crawl is resumed, as after a worker or API crash, from PostgreSQL alone (its pages,
 * their jobs, whether their links were read), so nothing is discovered or queued twice. **Work**, in
 * rounds until every job ended: robots.txt and sitemaps once ({@link SiteDiscovery}, `seeded_at`);
 * the links of each ended page (depth + 1, within scope, include/exclude, robots.txt and the SSRF
 * guard); new jobs for waiting pages ({@link ScreenshotsService.acceptWithin}: pending cap, quota and
 * fair share like any batch, up to `maxPages`); a cancel fails the jobs not yet started. Then the
 * bundle ({@link CrawlBundle}). **Finish**: the ending and its event in one transaction. A process
 * that stops leaves the crawl `running`; the reconciler queues it again. Its periodic sweep deletes
 * bundles past `RESULT_TTL_DAYS`.
 */
@Injectable()
export class CrawlProcessor extends WorkProcessor<CrawlPayload, string, Crawl, CrawlEnding | null> implements OnModuleInit {
  protected readonly jobName = CRAWL_JOB;
  /** The drivers' waits between looks at their crawls, ended early when a page's job of this process ends. */
  private readonly ticks = new WakeableWaits(this.stopping.signal);

  constructor(
    @InjectQueue(CRAWL_QUEUE) protected readonly queue: Queue<CrawlPayload>,
    @InjectDataSource() private readonly db: DataSource,
    private readonly lifecycle: CrawlLifecycle,
    private readonly pages: CrawlPages,
    private readonly discovery: SiteDiscovery,
    private readonly screenshots: ScreenshotsService,
    private readonly files: ResultFilesService,
    private readonly bundle: CrawlBundle,
    private readonly apiKeys: ApiKeysService,
    private readonly guard: SsrfGuard,
    private readonly events: EventsService,
    private readonly clock: Clock,
  ) {
    super();
  }

  /** Hears of every ended capture job, after its commit: the drivers of this process look at their crawls at once. */
  onModuleInit(): void {
    this.events.registerSink({
      fanOut: (event) => {
        if (event.type !== 'screenshot.completed' && event.type !== 'screenshot.failed') return Promise.resolve();
        return Promise.resolve(async () => this.ticks.wakeAll());
      },
    });
  }

  protected override periodicJobs(): PeriodicJob[] {
    return [{ jobName: CRAWL_SWEEP_JOB, everyMs: CRAWL_SWEEP_INTERVAL_MS, run: () => this.sweep(), atStart: true }];
  }

  /** The sweep: deletes the bundles of crawls past `RESULT_TTL_DAYS` ({@link CrawlLifecycle.purgeExpiredBundles}); returns how many. */
  sweep(): Promise<number> {
    return this.lifecycle.purgeExpiredBundles(this.files.expiredBefore(this.clock.now()), PURGE_BATCH);
  }

  protected concurrency(): number {
    return CRAWL_DRIVERS_PER_PROCESS;
  }

  protected shutdownWaitMs(): number {
    return 5_000;
  }

  protected inputOf(data: CrawlPayload): string {
    return data.crawlId;
  }

  protected idOf(crawlId: string): string {
    return crawlId;
  }

  /** Claims the crawl ({@link CrawlLifecycle.claim}), unless this process drives it already (a queue entry the reconciler added again). */
  protected async claim(crawlId: string): Promise<Crawl | null> {
    return this.isInFlight(crawlId) ? null : this.lifecycle.claim(crawlId);
  }

  protected work(crawl: Crawl): Promise<CrawlEnding | null> {
    return this.drive(crawl);
  }

  protected async finish(crawl: Crawl, ending: CrawlEnding | null): Promise<unknown> {
    return ending ? this.lifecycle.finish(crawl.id, ending, ['running']) : null;
  }

  /** The crawl's rounds until it ends (its ending) or this process stops or someone else ended it (null). */
  private async drive(crawl: Crawl): Promise<CrawlEnding | null> {
    const caller = await this.apiKeys.callerFor(crawl.accountId, crawl.apiKeyId);
    if (!caller) return this.conclude(crawl, 'quota', 'the API key of the crawl was revoked');
    const rules = new CrawlUrlRules(crawl.url, crawl.scope, crawl.include, crawl.exclude);
    const robots = crawl.respectRobots || crawl.discover !== 'links' ? await this.discovery.robots(crawl.url) : null;
    const allows = (url: string) => !crawl.respectRobots || !robots || robots.allows(url);
    if (!crawl.seededAt) {
      const refusal = await this.seed(crawl, rules, robots, allows);
      if (refusal) return this.conclude(crawl, 'exhausted', refusal);
    }
    let stopped: CrawlStoppedReason | null = null;
    const reachable = this.reachability();
    for (;;) {
      if (this.stopping.signal.aborted) return null;
      const now = await this.lifecycle.reload(crawl.id);
      if (!now || now.status !== 'running') return null;
      if (now.cancelRequestedAt && stopped !== 'canceled') {
        stopped = 'canceled';
        await this.screenshots.failPendingOfCrawl(crawl.id, CRAWL_CANCELED_MESSAGE);
      }
      await this.harvest(crawl, stopped === null, rules, allows, reachable);
      let progress = (await this.pages.progress([crawl.id])).get(crawl.id) ?? NO_PROGRESS;
      if (stopped === null && progress.unqueued > 0 && progress.pagesQueued < crawl.maxPages) {
        stopped = await this.queuePages(crawl, caller, crawl.maxPages - progress.pagesQueued);
        progress = (await this.pages.progress([crawl.id])).get(crawl.id) ?? NO_PROGRESS;
      }
      const waiting = progress.unqueued > 0 && stopped === null && progress.pagesQueued < crawl.maxPages;
      if (progress.open === 0 && progress.unharvested === 0 && !waiting) {
        return this.conclude(crawl, stopped ?? (progress.unqueued > 0 ? 'maxPages' : 'exhausted'));
      }
      await this.ticks.wait(CRAWL_TICK_MS);
    }
  }

  /**
   * Reads robots.txt and the sitemaps and stores the first pages (the start URL, then the sitemaps'
   * pages in scope, all at depth 0) with `seeded_at`, in one transaction. Returns the customer-safe
   * reason the crawl cannot start (robots.txt refuses its start URL), else null.
   */
  private async seed(
    crawl: Crawl,
    rules: CrawlUrlRules,
    robots: SiteRobots | null,
    allows: (url: string) => boolean,
  ): Promise<string | null> {
    const start = normaliseUrl(crawl.url)!;
    if (!allows(start)) return `robots.txt does not allow user agent Glimpse to read the start URL`;
    const found = [{ url: start, depth: 0 }];
    if (crawl.discover !== 'links') {
      const sitemaps = [new URL('/sitemap.xml', start).href, ...(robots?.sitemaps ?? [])];
      const reachable = this.reachability();
      for (const url of await this.discovery.sitemapPages(sitemaps)) {
        if (rules.keeps(url) && allows(url) && (await reachable(url))) found.push({ url, depth: 0 });
      }
    }
    await this.db.transaction(async (manager) => {
      await this.pages.add(crawl.id, found, manager);
      await this.lifecycle.markSeeded(manager, crawl.id);
    });
    return null;
  }

  /**
   * Reads the links of pages whose job ended (when `follow`, the crawl discovers `links` and the page
   * is above `maxDepth`), stores those kept at depth + 1 and marks the pages read, one transaction per
   * {@link PAGE_BATCH} pages (shallowest first), so a crash re-reads at most the pages it was on (a
   * link found twice is kept once, at the depth it was first stored with).
   */
  private async harvest(
    crawl: Crawl,
    follow: boolean,
    rules: CrawlUrlRules,
    allows: (url: string) => boolean,
    reachable: (url: string) => Promise<boolean>,
  ): Promise<void> {
    for (;;) {
      const ended = await this.pages.unharvested(crawl.id, PAGE_BATCH);
      if (!ended.length) return;
      const results = await this.screenshots.crawlPageResults(ended.map((page) => page.jobId));
      const found: { url: string; depth: number }[] = [];
      for (const page of ended) {
        const result = results.get(page.jobId);
        if (follow && crawl.discover !== 'sitemap' && page.depth < crawl.maxDepth && result?.linksFile) {
          for (const link of await this.readLinks(result.linksFile, page.url)) {
            if (rules.keeps(link) && allows(link) && (await reachable(link))) found.push({ url: link, depth: page.depth + 1 });
          }
        }
      }
      await this.db.transaction(async (manager) => {
        await this.pages.add(crawl.id, found, manager);
        await this.pages.markHarvested(
          manager,
          ended.map((page) => page.seq),
        );
      });
    }
  }

  /** The normalised URLs of a stored links file (`extract: ["links"]`), resolved against `pageUrl`; none when it cannot be read. */
  private async readLinks(file: string, pageUrl: string): Promise<string[]> {
    const opened = await this.files.open(file, LINKS_MAX_BYTES);
    if (!opened?.data) return [];
    try {
      const links = JSON.parse(opened.data.toString('utf8')) as { url?: unknown }[];
      return links.flatMap((link) => (typeof link?.url === 'string' ? [normaliseUrl(link.url, pageUrl) ?? []].flat() : []));
    } catch {
      return [];
    }
  }

  /**
   * Accepts jobs for up to `room` waiting pages, {@link PAGE_BATCH} per transaction, each counted like
   * any job (class `batch`). Returns `quota` when the quota is spent (the crawl stops creating jobs),
   * else null (the account's pending cap only delays the rest to a later round).
   */
  private async queuePages(crawl: Crawl, caller: AuthenticatedKey, room: number): Promise<CrawlStoppedReason | null> {
    const input = captureInputOf(crawl);
    while (room > 0) {
      const batch = await this.pages.unqueued(crawl.id, Math.min(room, PAGE_BATCH));
      if (!batch.length) return null;
      let refused: ErrorCode | null = null;
      const afterCommits = await this.db.transaction(async (manager) => {
        const after: (() => Promise<void>)[] = [];
        for (const page of batch) {
          try {
            const accepted = await this.screenshots.acceptWithin(manager, caller, input, page.url, crawl.id);
            // Another driver queued it meanwhile: undo this acceptance with the transaction.
            if (!(await this.pages.assignJob(manager, page.seq, accepted.job.id))) throw new Error(`page ${page.seq} already queued`);
            after.push(accepted.afterCommit);
          } catch (err) {
            if (!(err instanceof ApiError) || (err.code !== ErrorCode.PLAN_QUOTA_EXCEEDED && err.code !== ErrorCode.TOO_MANY_PENDING_JOBS))
              throw err;
            refused = err.code;
            break;
          }
        }
        return after;
      });
      for (const afterCommit of afterCommits) await afterCommit();
      room -= afterCommits.length;
      if (refused === ErrorCode.PLAN_QUOTA_EXCEEDED) return 'quota';
      if (refused) return null;
    }
    return null;
  }

  /**
   * The crawl's ending once every job ended: `failed` when its start page could not be read and no
   * page was captured (or `refusal` says why it could not start), `canceled` after a cancel, else
   * `completed`; with its counts and its bundle (null when it could not be stored: logged).
   */
  private async conclude(crawl: Crawl, stoppedReason: CrawlStoppedReason, refusal: string | null = null): Promise<CrawlEnding> {
    const progress = (await this.pages.progress([crawl.id])).get(crawl.id) ?? NO_PROGRESS;
    const bundled: BundledPage[] = [];
    for (let after = 0; ;) {
      const listed = await this.pages.list(crawl.id, after, 500);
      if (!listed.length) break;
      after = listed[listed.length - 1].seq;
      const results = await this.screenshots.crawlPageResults(listed.flatMap((p) => (p.jobId ? [p.jobId] : [])));
      for (const page of listed)
        bundled.push({ url: page.url, depth: page.depth, result: page.jobId ? (results.get(page.jobId) ?? null) : null });
    }
    const start: CrawlPageResult | null = bundled[0]?.result ?? null;
    let error = refusal;
    if (!error && stoppedReason !== 'canceled' && start?.status === 'failed' && progress.pagesDone === 0) {
      error = 'the start URL could not be read';
    }
    let bundleFile: string | null = null;
    try {
      bundleFile = await this.bundle.store(bundled);
    } catch (err) {
      this.logger.error(`Could not store the bundle of ${crawl.id}`, (err as Error).stack);
    }
    const { pagesFound, pagesQueued, pagesDone, pagesFailed } = progress;
    return {
      status: stoppedReason === 'canceled' ? 'canceled' : error ? 'failed' : 'completed',
      stoppedReason,
      bundleFile,
      finalCounts: { pagesFound, pagesQueued, pagesDone, pagesFailed },
      error,
    };
  }

  /** Whether the SSRF guard lets the service connect to a URL's host, each host checked once per round of a crawl. */
  private reachability(): (url: string) => Promise<boolean> {
    const hosts = new Map<string, Promise<boolean>>();
    return (url) => {
      const host = new URL(url).host;
      let allowed = hosts.get(host);
      if (!allowed) {
        allowed = this.guard.assertAllowed(url).then(
          () => true,
          () => false,
        );
        hosts.set(host, allowed);
      }
      return allowed;
    };
  }
}

/** The capture options of a crawl's jobs: the crawl's `capture`, with `links` (to follow them) and `metadata` (each page's title) extracted. */
function captureInputOf(crawl: Crawl): CaptureOptionsInput {
  const extract = new Set<ExtractKind>((crawl.capture.extract as ExtractKind[] | undefined) ?? []);
  if (crawl.discover !== 'sitemap') extract.add('links');
  extract.add('metadata');
  return { ...crawl.capture, extract: [...extract] };
}
